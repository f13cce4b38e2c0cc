// Data-parallel gradient synchronisation, as PyTorch DDP's reducer does it:
//
//   GradSync sync(params, comm, options);      // after broadcast_parameters
//   every step:
//     sync.zero_grad();
//     for each micro-batch a of this rank:
//       sync.prepare(a == last);  forward;  backward
//     sync.synchronize();                      // gradients summed over ranks
//     grad_norm = sync.scale_and_clip(global_target_tokens, max_norm);   // on the device
//     optimizer step
//
// Gradients live in flat buckets of ~bucket_bytes (parameters taken in
// reverse registration order, roughly the order backward produces them);
// every parameter's .grad is a view into its bucket, so autograd accumulates
// straight into the buffer that is sent. With overlap, a hook on each
// parameter's gradient accumulator marks it done during the last micro-
// batch's backward; as a bucket completes its allreduce starts, in bucket
// order (every rank issues the same collectives in the same order), while
// backward goes on with earlier layers. Earlier micro-batches only
// accumulate: one allreduce per step, whatever accum_steps is.
//
// synchronize() starts the buckets still waiting (overlap off, parameters that
// got no gradient, a rank whose last micro-batch was empty) and waits for all.
// It must come before any other collective of the step: ranks may differ in
// how many buckets backward started, never in the order they are issued.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "trainer/distributed/communicator.h"

namespace distributed {

// Parameters equal rank 0's on every rank.
void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm);

struct GradSyncOptions {
  int64_t bucket_bytes = 25 << 20;
  bool overlap = true;  // false: all buckets start after backward
};

class GradSync {
 public:
  GradSync(const std::vector<torch::Tensor>& params, Communicator& comm, GradSyncOptions options);
  ~GradSync();  // removes the hooks

  void zero_grad();
  // Before a micro-batch's backward; `last`: this backward completes the step's gradients.
  void prepare(bool last);
  // Collective: every bucket's allreduce started (in order) and finished.
  void synchronize();
  // The summed gradients / divisor (a 0-dim tensor on the gradients'
  // device), clipped to max_norm (inf: no clip) as
  // torch::nn::utils::clip_grad_norm_ does. Returns the norm before clipping,
  // a 0-dim double tensor on the device: nothing here waits for the device.
  torch::Tensor scale_and_clip(const torch::Tensor& divisor, double max_norm);

  // What the last synchronize() saw.
  struct Stats {
    double wait_seconds = 0;          // blocked in Work::wait()
    int64_t started_in_backward = 0;  // buckets whose allreduce overlapped backward
  };
  const Stats& stats() const { return stats_; }
  // Parameter indices (into the constructor's list) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_layout() const;

  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

 private:
  struct Bucket {
    torch::Tensor flat;          // [sum of numel] the gradients of its parameters
    std::vector<size_t> params;  // indices into params_
    size_t pending = 0;          // parameters not yet done this step
    std::unique_ptr<Work> work;  // the allreduce, once started
  };

  void on_gradient_ready(size_t param);
  void start_ready_buckets();  // in order, stopping at the first incomplete one

  std::vector<torch::Tensor> params_;
  Communicator& comm_;
  GradSyncOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // param index -> bucket index
  std::vector<bool> done_;         // param index -> gradient complete this step
  size_t next_to_start_ = 0;
  bool armed_ = false;  // hooks act (the last micro-batch's backward)
  // Each parameter's AccumulateGrad node (a shared_ptr in LibTorch 1.13, an
  // intrusive_ptr in 2.x) and its post hook's key.
  using Accumulator = decltype(torch::autograd::impl::grad_accumulator(torch::Tensor()));
  std::vector<std::pair<Accumulator, uintptr_t>> hooks_;
  Stats stats_;
};

}  // namespace distributed
