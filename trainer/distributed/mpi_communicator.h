// Communicator over MPI_COMM_WORLD for contiguous tensors: CPU tensors
// directly; CUDA tensors through pinned host copies, or directly where Open
// MPI reports itself CUDA-aware (so that several ranks can share a GPU, e.g.
// for testing, with dist.backend = "mpi").
// MPI is initialised with MPI_THREAD_FUNNELED (launch/process.h): only the
// main thread may call in, which autograd's CPU hooks satisfy (they run on the
// thread that called backward); calls from another thread are refused.
#pragma once
#include "trainer/distributed/communicator.h"

namespace distributed {

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator();
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  const char* backend() const override { return "mpi"; }
  void allreduce_sum(torch::Tensor& tensor) override;
  std::unique_ptr<Work> iallreduce_sum(torch::Tensor& tensor) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  torch::Tensor allgather(const torch::Tensor& local) override;
  void barrier() override;

 private:
  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace distributed
