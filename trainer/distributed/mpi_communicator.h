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
  std::unique_ptr<Work> ireduce_scatter_sum(const torch::Tensor& flat,
                                            torch::Tensor& shard) override;
  std::unique_ptr<Work> iallgather_in_place(torch::Tensor& flat) override;
  void reduce_scatter_sum(const torch::Tensor& flat, torch::Tensor& shard) override;
  void allgather_in_place(torch::Tensor& flat) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  torch::Tensor allgather(const torch::Tensor& local) override;
  void barrier() override;

 private:
  // `start`: non-blocking (MPI_I...), else MPI's blocking call.
  std::unique_ptr<Work> allreduce(torch::Tensor& tensor, bool start);
  std::unique_ptr<Work> reduce_scatter(const torch::Tensor& flat, torch::Tensor& shard, bool start);
  std::unique_ptr<Work> allgather_shards(torch::Tensor& flat, bool start);

  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace distributed
