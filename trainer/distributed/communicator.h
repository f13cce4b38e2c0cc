// Collective operations across the ranks of a job, on whole tensors.
//
// Backends: MPI for CPU tensors (mpi_communicator.h, always built) and NCCL
// for CUDA tensors (nccl_communicator.h, built when CUDA and NCCL are found).
// make_communicator() picks one for the training device.
//
// Every rank must issue the same collectives in the same order; that includes
// the non-blocking ones (GradSync launches its buckets in a fixed order).
#pragma once
#include <memory>
#include <string>

#include <torch/torch.h>

namespace distributed {

// A collective in flight. Its tensor must stay alive and untouched until wait().
class Work {
 public:
  virtual ~Work() = default;
  // True once complete. Also drives progress where the backend needs it
  // (Communicator::needs_progress_polls).
  virtual bool test() = 0;
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual const char* backend() const = 0;  // "mpi" | "nccl"

  // In place: tensor = sum over ranks (contiguous; float, double, int32, int64, uint8).
  virtual void allreduce_sum(torch::Tensor& tensor) = 0;
  // The same, started now and finished by Work::wait().
  virtual std::unique_ptr<Work> iallreduce_sum(torch::Tensor& tensor) = 0;
  // Started now, finished by Work::wait(): `shard` (contiguous, numel = n =
  // flat.numel() / world_size) = the sum over ranks of elements
  // [rank * n, (rank + 1) * n) of their `flat`. `flat` may serve as scratch.
  virtual std::unique_ptr<Work> ireduce_scatter_sum(const torch::Tensor& flat,
                                                    torch::Tensor& shard) = 0;
  // Started now, finished by Work::wait(): in place, every rank's elements
  // [rank * n, (rank + 1) * n) of `flat` (n = flat.numel() / world_size) to all ranks.
  virtual std::unique_ptr<Work> iallgather_in_place(torch::Tensor& flat) = 0;
  // Their blocking forms. (MPI's blocking collectives run other, faster
  // algorithms than its non-blocking ones: use these when nothing overlaps.)
  virtual void reduce_scatter_sum(const torch::Tensor& flat, torch::Tensor& shard) {
    ireduce_scatter_sum(flat, shard)->wait();
  }
  virtual void allgather_in_place(torch::Tensor& flat) { iallgather_in_place(flat)->wait(); }
  // In place: every rank gets rank `root`'s tensor.
  virtual void broadcast(torch::Tensor& tensor, int root) = 0;
  // [world_size, *local.shape]: row r is rank r's `local`.
  virtual torch::Tensor allgather(const torch::Tensor& local) = 0;
  virtual void barrier() = 0;
  // Makes collectives in flight return (with an error) instead of hanging;
  // safe to call from another thread (the watchdog). The communicator is
  // unusable afterwards.
  virtual void abort() {}
  // True when a blocking collective, or Work::wait(), returns once the
  // collective is complete (MPI); false when they return once the device has
  // been told to wait for it (NCCL): what a flight recorder may call done.
  virtual bool completes_on_host() const { return true; }
  // True when collectives in flight move forward only while this process
  // calls into the communicator (MPI advances non-blocking collectives inside
  // MPI calls only), so that a caller computing meanwhile should call a
  // work's test() now and then; false when they progress by themselves
  // (NCCL: on the GPU and NCCL's proxy thread), where polling only costs.
  virtual bool needs_progress_polls() const { return true; }
  // A failure the communicator learned of in the background (NCCL: a peer
  // died, a network error), or "": safe to call from another thread (the
  // watchdog polls it). MPI has none: Open MPI ends the job itself.
  virtual std::string async_error() { return {}; }
};

}  // namespace distributed
