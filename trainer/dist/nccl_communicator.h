// Communicator over NCCL for contiguous CUDA tensors of this rank's device
// (built only when CUDA and NCCL are found: TRAINER_WITH_NCCL).
//
//   - The NCCL unique id is created by rank 0 and sent to all ranks over MPI.
//   - Collectives run on the communicator's own CUDA stream. Before each, that
//     stream waits (on the GPU, not the host) for work already queued on the
//     default stream, where LibTorch computes unless told otherwise; after a
//     non-blocking one, Work::wait() makes the default stream wait for it.
//   - Every CUDA and NCCL call is checked; a failure throws naming the call.
#pragma once
#include "trainer/dist/communicator.h"

namespace dist {

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(int device);  // CUDA device index of this rank
  ~NcclCommunicator() override;
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  const char* backend() const override { return "nccl"; }
  void allreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> iallreduce_sum(torch::Tensor& tensor) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  torch::Tensor allgather(const torch::Tensor& local) override;
  void barrier() override;

  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

 private:
  struct State;  // NCCL and CUDA handles, kept out of this header
  std::unique_ptr<State> state_;
  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace dist
