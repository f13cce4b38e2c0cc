// Data-parallel gradient synchronisation, as PyTorch DDP's reducer does it
// (docs/DESIGN.md, "Gradient buckets and the NCCL communicator"):
//
//   GradSync sync(params, comm, options);      // after broadcast_parameters
//   every step:
//     sync.zero_grad();
//     for each micro-batch a of this rank:
//       sync.prepare(a == last);  forward;  backward
//     sync.synchronize();                      // gradients summed over ranks
//     scale = clip_scale(sync.sum_of_squares() summed over ranks, global_target_tokens, max_norm)
//     optimizer step on gradients * scale.factor (train/adam_step.h)
//
// Every parameter's .grad is a view into a flat bucket (bucket_plan.h), so
// autograd accumulates into the buffer that is sent; with overlap, a bucket's
// collective starts during the last backward as soon as its gradients are done.
// Sharded (ZeRO stage 1), a reduce-scatter leaves each rank the summed
// gradients of its shard, which it updates; gather_parameters() allgathers.
// Node-shared, the buckets live in memory every rank of this machine maps.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "trainer/distributed/bucket_plan.h"
#include "trainer/distributed/communicator.h"

namespace distributed {

// Parameters equal rank 0's on every rank.
void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm);

struct GradSyncOptions {
  int64_t bucket_bytes = 25 << 20;  // a bucket closes once it holds this many bytes
  bool overlap = true;       // false: all buckets start after backward
  bool shard = false;        // reduce-scatter, each rank updates its shard, allgather
  bool node_shared = false;  // sharded, ranks on one machine: through shared memory
};

// What turns the summed gradients into the update's: g = sum / divisor,
// clipped as torch::nn::utils::clip_grad_norm_ clips (max_norm inf: no clip).
// 0-dim float64 tensors on the gradients' device, so the host need not wait;
// the optimizer applies the factor as it reads each gradient (train/adam_step.h).
struct GradScale {
  torch::Tensor norm;    // of sum / divisor, before clipping
  torch::Tensor factor;  // clip coefficient / divisor
};
GradScale clip_scale(const torch::Tensor& sum_of_squares, const torch::Tensor& divisor,
                     double max_norm);

class GradSync {
 public:
  GradSync(const std::vector<torch::Tensor>& params, Communicator& comm, GradSyncOptions options);
  ~GradSync();  // removes the hooks

  // Before a step's first backward: the gradients become undefined (DDP's
  // set_to_none), and a hook copies each one's first gradient into its bucket view.
  void zero_grad();
  // Before a micro-batch's backward; `last`: this backward completes the step's gradients.
  void prepare(bool last);
  // Collective: every bucket's collective started (in order) and finished;
  // parameters that got no gradient get zeros. Before any other collective of the step.
  void synchronize();
  // This rank's part of the summed gradients' squared norm (its shard of each
  // bucket): summed over ranks, the whole. A 0-dim double tensor on the
  // gradients' device (nothing here waits for the device).
  torch::Tensor sum_of_squares() const;

  bool sharded() const { return options_.shard; }
  // Sharded through memory all ranks map (the same on every rank).
  bool node_shared() const { return node_shared_; }
  // Sharded: per bucket, this rank's shard of the flat parameters (a view,
  // so updating it updates the model) with its summed gradient as .grad().
  const std::vector<torch::Tensor>& shard_parameters() const { return shard_params_; }
  // Sharded, collective: every rank's updated shards to all ranks.
  void gather_parameters();
  // Sharded: per-parameter tensors (shaped like the parameters, e.g. Adam's
  // moments) as this rank's shard of each bucket.
  std::vector<torch::Tensor> to_shards(const std::vector<torch::Tensor>& per_parameter) const;
  // Sharded: per bucket, the parameters' pieces in this rank's shard (bucket_plan.h).
  std::vector<std::vector<ShardPiece>> shard_pieces() const;

  // What the last synchronize() saw.
  struct Stats {
    double wait_seconds = 0;          // blocked in the collectives (after backward)
    int64_t started_in_backward = 0;  // buckets whose allreduce overlapped backward
  };
  const Stats& stats() const { return stats_; }
  // Parameter indices (into the constructor's list) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_layout() const;

  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

 private:
  struct Bucket {
    PlannedBucket layout;        // its parameters, their offsets, its padded size, the shards
    torch::Tensor flat;          // [padded_numel] the gradients of its parameters
    torch::Tensor flat_params;   // sharded: [padded_numel] the parameters' values, laid out alike
    torch::Tensor summed_shard;  // sharded: [shard] this rank's shard of flat, summed over ranks
    torch::Tensor norm_part;     // what this rank adds to the norm: summed_shard, or flat's shard
    std::vector<torch::Tensor> peer_grads;  // node-shared: every rank's `flat`, by rank
    size_t pending = 0;                     // parameters not yet done this step
    std::unique_ptr<Work> work;             // the collective, once started
  };

  // The constructor's steps.
  void check_parameters() const;  // each one a leaf that requires grad
  // Node-shared: [total parameters | total per rank's gradients] mapped by all
  // ranks, or nothing (collective).
  std::optional<torch::Tensor> node_shared_buffers(int64_t total);
  // The bucket's tensors: views of `shared` where every rank maps the buckets, else its own.
  Bucket allocate_bucket(const PlannedBucket& layout, const std::optional<torch::Tensor>& shared,
                         int64_t total) const;
  void place_parameters(size_t b);    // .grad (sharded: values too) views into bucket b
  void assign_shard(Bucket& bucket);  // summed_shard and the shard's parameters, or norm_part
  void add_gradient_hooks();

  // The parameter's gradient into its bucket view, which becomes its .grad
  // again: a gradient backward left elsewhere is copied, none is zeros.
  void adopt_gradient(size_t param);
  void on_gradient_ready(size_t param);  // adopts; with overlap, starts the buckets complete
  void start_ready_buckets();            // in order, stopping at the first incomplete one
  std::unique_ptr<Work> launch(Bucket& bucket);  // the bucket's collective, non-blocking
  void complete(Bucket& bucket);                 // the same, blocking
  void sum_shared_shards();  // node-shared: this rank's summed shards (collective)
  const Range& own_shard(const Bucket& bucket) const {  // this rank's (bucket_plan.h)
    return bucket.layout.shards[comm_.rank()];
  }

  std::vector<torch::Tensor> params_;        // as given; their .grad (sharded: values) bucket views
  Communicator& comm_;                       // the ranks' collectives
  GradSyncOptions options_;                  // as given
  std::vector<Bucket> buckets_;              // in launch order
  std::vector<torch::Tensor> shard_params_;  // sharded: per bucket, see shard_parameters()
  std::vector<size_t> bucket_of_;            // param index -> bucket index
  std::vector<torch::Tensor> grad_views_;    // param index -> its gradient's view into its bucket
  std::vector<bool> done_;                   // param index -> gradient complete this step
  size_t next_to_start_ = 0;                 // buckets before it are started this step
  bool armed_ = false;        // hooks start buckets (the last micro-batch's backward, overlap)
  bool node_shared_ = false;  // buckets in memory every rank maps: see node_shared()
  // Each parameter's AccumulateGrad node (a shared_ptr in LibTorch 1.13, an
  // intrusive_ptr in 2.x) and its post hook's key.
  using Accumulator = decltype(torch::autograd::impl::grad_accumulator(torch::Tensor()));
  std::vector<std::pair<Accumulator, uintptr_t>> hooks_;
  Stats stats_;  // see stats()
};

}  // namespace distributed
