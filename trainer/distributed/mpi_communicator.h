// Communicator over MPI_COMM_WORLD for contiguous tensors: CPU tensors
// directly; CUDA tensors through pinned host copies (so that several ranks can
// share a GPU, e.g. for testing, with dist.backend = "mpi"), or, for the
// blocking collectives only, directly where Open MPI reports itself
// CUDA-aware: Open MPI's CUDA support does not cover its non-blocking
// collectives (its FAQ, "CUDA-aware support"), so those are always staged.
//
// Threads: MPI is initialised with MPI_THREAD_FUNNELED (launch/process.h):
// only the main thread may call MPI. Autograd runs the gradient hooks that
// start GradSync's buckets on the thread that called backward for CPU
// tensors, but on its own per-device thread for CUDA tensors. A collective
// started off the main thread is therefore queued, not started: the main
// thread's next call into this communicator (any collective, or a work's
// test() or wait()) starts the queued ones first, in the order they were
// queued, so every rank still issues the same collectives in the same order.
// For CUDA parameters that means no overlap with backward: the buckets start
// when backward has returned (the MPI backend on GPUs is for testing; NCCL is
// the GPU backend). A blocking collective off the main thread is an error.
#pragma once
#include <deque>
#include <functional>
#include <mutex>

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

  // A collective queued off the main thread, started by the main thread.
  struct Deferred;

 private:
  // On the main thread: the queued collectives started, in order. Elsewhere: nothing.
  void start_deferred();
  // Runs `launch` (the collective's MPI calls) now on the main thread, after
  // the queued ones; elsewhere queues it, or refuses a blocking collective.
  std::unique_ptr<Work> issue(std::function<std::unique_ptr<Work>()> launch, bool blocking);

  // `start`: non-blocking (MPI_I...), else MPI's blocking call.
  std::unique_ptr<Work> allreduce(torch::Tensor& tensor, bool start);
  std::unique_ptr<Work> reduce_scatter(const torch::Tensor& flat, torch::Tensor& shard, bool start);
  std::unique_ptr<Work> allgather_shards(torch::Tensor& flat, bool start);

  int rank_ = 0;
  int world_size_ = 1;
  int64_t rings_started_ = 0;  // reduce-scatters started: their messages' tags
  std::mutex deferred_mutex_;
  std::deque<std::shared_ptr<Deferred>> deferred_;  // queued, oldest first
};

}  // namespace distributed
