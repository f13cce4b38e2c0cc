// Communicator over NCCL for contiguous CUDA tensors of this rank's device
// (built only against a CUDA LibTorch with NCCL: TRAINER_WITH_NCCL).
//
//   - The NCCL unique id is created by rank 0 and sent to all ranks over MPI;
//     the NCCL version and library in use are logged.
//   - Collectives run on the communicator's own CUDA stream. Before each, that
//     stream waits (on the GPU, not the host) for the work queued so far on
//     the current stream, where LibTorch computes; the tensor is recorded on
//     the communication stream, so the caching allocator does not reuse its
//     memory early. After a non-blocking one, Work::wait() makes the current
//     stream wait for it.
//   - This rank's device is the current device at every collective (checked:
//     a different one is an error), and a device guard holds it around the
//     collectives' NCCL calls, the abort and the destructor, whichever thread
//     makes them (a bucket started on autograd's device thread, the
//     watchdog's abort). Events are c10's, which set the stream's device
//     around each call themselves, and whose query clears CUDA's "not ready"
//     (docs/DESIGN.md, "Gradient buckets and the NCCL communicator").
//   - Collectives progress on the GPU and NCCL's proxy thread by themselves:
//     nothing needs to poll them (needs_progress_polls() is false).
//   - Every CUDA and NCCL call is checked; a host wait polls
//     ncclCommGetAsyncError and aborts the communicator on an error (a peer
//     that died) instead of hanging; the watchdog polls async_error() about
//     once a second, and abort()s.
#pragma once
#include "trainer/distributed/communicator.h"

namespace distributed {

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(int device);  // CUDA device index of this rank
  ~NcclCommunicator() override;
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  const char* backend() const override { return "nccl"; }
  void allreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> iallreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> ireduce_scatter_sum(const torch::Tensor& flat,
                                            torch::Tensor& shard) override;
  std::unique_ptr<Work> iallgather_in_place(torch::Tensor& flat) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  torch::Tensor allgather(const torch::Tensor& local) override;
  void barrier() override;
  void abort() override;
  std::string async_error() override;
  bool completes_on_host() const override { return false; }
  bool needs_progress_polls() const override { return false; }

  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  struct State;  // NCCL and CUDA handles, shared with work in flight; kept out of this header

 private:
  std::shared_ptr<State> state_;
  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace distributed
