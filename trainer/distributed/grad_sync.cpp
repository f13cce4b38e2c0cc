#include "trainer/distributed/grad_sync.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "base/seconds.h"
#include "trainer/distributed/node_shared_memory.h"

namespace distributed {

void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params) {
    torch::Tensor buffer = p.detach().contiguous();
    comm.broadcast(buffer, 0);
    p.copy_(buffer);
  }
}

namespace {

constexpr int64_t kLine = 16;  // elements: 64 bytes of float32

std::vector<ParameterShape> shapes_of(const std::vector<torch::Tensor>& params) {
  std::vector<ParameterShape> shapes;
  for (const auto& p : params) shapes.push_back({p.numel(), p.scalar_type(), p.device()});
  return shapes;
}

// The part of a flat tensor laid out like a bucket where `p` lies, shaped like it.
torch::Tensor place_of(const torch::Tensor& flat, int64_t offset, const torch::Tensor& p) {
  return flat.narrow(0, offset, p.numel()).view_as(p);
}

}  // namespace

GradSync::GradSync(const std::vector<torch::Tensor>& params, Communicator& comm,
                   GradSyncOptions options)
    : params_(params),
      comm_(comm),
      options_(options),
      bucket_of_(params.size()),
      grad_views_(params.size()),
      done_(params.size(), false) {
  if (options_.bucket_bytes <= 0) throw std::invalid_argument("GradSync: bucket_bytes must be > 0");
  check_parameters();
  torch::NoGradGuard no_grad;
  const BucketPlan plan = plan_buckets(
      shapes_of(params_), {options_.bucket_bytes, kLine, comm_.world_size(), options_.shard});
  const std::optional<torch::Tensor> shared = node_shared_buffers(plan.numel);
  node_shared_ = shared.has_value();
  for (size_t b = 0; b < plan.buckets.size(); ++b) {
    buckets_.push_back(allocate_bucket(plan.buckets[b], shared, plan.numel));
    place_parameters(b);
    assign_shard(buckets_[b]);
  }
  if (shared) comm_.barrier();  // rank 0's parameter values in place for every rank
  add_gradient_hooks();
}

void GradSync::check_parameters() const {
  for (size_t k = 0; k < params_.size(); ++k)
    if (!params_[k].requires_grad() || !params_[k].is_leaf())
      throw std::invalid_argument("GradSync: parameter " + std::to_string(k) +
                                  " is not a leaf that requires grad");
}

std::optional<torch::Tensor> GradSync::node_shared_buffers(int64_t total) {
  const bool cpu_float = std::all_of(params_.begin(), params_.end(), [](const torch::Tensor& p) {
    return p.device().is_cpu() && p.scalar_type() == torch::kFloat;
  });
  if (!options_.shard || !options_.node_shared || comm_.world_size() == 1 || !cpu_float)
    return std::nullopt;
  return node_shared_memory(comm_, total * (1 + comm_.world_size()));
}

// Node-shared: [parameters | rank 0's gradients | rank 1's | ...], each `total`
// long, the bucket at layout.begin in each.
GradSync::Bucket GradSync::allocate_bucket(const PlannedBucket& layout,
                                           const std::optional<torch::Tensor>& shared,
                                           int64_t total) const {
  Bucket bucket;
  bucket.layout = layout;
  if (shared) {
    const auto region = [&](int64_t k) {
      return shared->narrow(0, total * k + layout.begin, layout.padded_numel);
    };
    for (int64_t r = 0; r < comm_.world_size(); ++r) bucket.peer_grads.push_back(region(1 + r));
    bucket.flat = bucket.peer_grads[comm_.rank()];
    bucket.flat_params = region(0);
  } else {
    bucket.flat = torch::zeros({layout.padded_numel}, params_[layout.params.front()].options());
    if (options_.shard) bucket.flat_params = torch::zeros_like(bucket.flat);
  }
  return bucket;
}

void GradSync::place_parameters(size_t b) {
  const Bucket& bucket = buckets_[b];
  for (size_t j = 0; j < bucket.layout.params.size(); ++j) {
    const size_t k = bucket.layout.params[j];
    const int64_t offset = bucket.layout.offsets[j];
    torch::Tensor& p = params_[k];
    grad_views_[k] = place_of(bucket.flat, offset, p);
    p.mutable_grad() = grad_views_[k];
    if (options_.shard) {  // the parameter's values move into the bucket, which it then views
      torch::Tensor values = place_of(bucket.flat_params, offset, p);
      if (!node_shared_ || comm_.rank() == 0) values.copy_(p);  // shared: rank 0's for all
      p.set_data(values);
    }
    bucket_of_[k] = b;
  }
}

void GradSync::assign_shard(Bucket& bucket) {
  const Range& shard = own_shard(bucket);
  if (!options_.shard) {  // every rank has all gradients; each takes its shard's norm
    bucket.norm_part = bucket.flat.narrow(0, shard.begin, shard.numel);
    return;
  }
  bucket.summed_shard =
      comm_.world_size() == 1 ? bucket.flat : torch::empty({shard.numel}, bucket.flat.options());
  bucket.norm_part = bucket.summed_shard;
  shard_params_.push_back(bucket.flat_params.narrow(0, shard.begin, shard.numel).detach());
  shard_params_.back().mutable_grad() = bucket.summed_shard;
}

// A post hook on each parameter's AccumulateGrad node runs right after
// autograd has added this backward's gradient into .grad.
void GradSync::add_gradient_hooks() {
  for (size_t k = 0; k < params_.size(); ++k) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params_[k]);
    const uintptr_t key =
        accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, k](const torch::autograd::variable_list& outputs,
                      const torch::autograd::variable_list&) {
              on_gradient_ready(k);
              return outputs;
            }));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

GradSync::~GradSync() {
  for (auto& [node, key] : hooks_) node->del_post_hook(key);
  for (auto& bucket : buckets_)
    if (bucket.work) bucket.work->wait();
}

std::vector<std::vector<size_t>> GradSync::bucket_layout() const {
  std::vector<std::vector<size_t>> layout;
  for (const auto& bucket : buckets_) layout.push_back(bucket.layout.params);
  return layout;
}

void GradSync::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

void GradSync::adopt_gradient(size_t param) {
  torch::Tensor& p = params_[param];
  const torch::Tensor& view = grad_views_[param];
  if (p.grad().is_same(view)) return;
  torch::NoGradGuard no_grad;
  if (p.grad().defined())
    view.copy_(p.grad());
  else
    view.zero_();
  p.mutable_grad() = view;
}

void GradSync::prepare(bool last) {
  armed_ = last && options_.overlap && !node_shared_;  // node-shared: nothing to launch
  if (!armed_) return;
  std::fill(done_.begin(), done_.end(), false);
  for (auto& bucket : buckets_) bucket.pending = bucket.layout.params.size();
  next_to_start_ = 0;
}

void GradSync::on_gradient_ready(size_t param) {
  adopt_gradient(param);
  if (!armed_ || done_[param]) return;
  done_[param] = true;
  if (--buckets_[bucket_of_[param]].pending == 0) start_ready_buckets();
  // MPI advances non-blocking collectives only inside MPI calls: poke the
  // ones in flight so they progress while backward computes. NCCL's need no
  // poke, and this hook runs once per parameter on the thread driving backward.
  if (comm_.needs_progress_polls())
    for (size_t b = 0; b < next_to_start_; ++b) buckets_[b].work->test();
}

void GradSync::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].pending == 0) {
    Bucket& bucket = buckets_[next_to_start_++];
    bucket.work = launch(bucket);
  }
}

std::unique_ptr<Work> GradSync::launch(Bucket& bucket) {
  return options_.shard ? comm_.ireduce_scatter_sum(bucket.flat, bucket.summed_shard)
                        : comm_.iallreduce_sum(bucket.flat);
}

void GradSync::complete(Bucket& bucket) {
  if (options_.shard)
    comm_.reduce_scatter_sum(bucket.flat, bucket.summed_shard);
  else
    comm_.allreduce_sum(bucket.flat);
}

// In the MPI ring's order (mpi_ring.cpp): shard r is
// (((x[r+1] + x[r+2]) + x[r+3]) + ... ) + x[r], ranks mod world, so that the
// sum is bitwise the same whether the ranks share a node or not.
void GradSync::sum_shared_shards() {
  comm_.barrier();  // every rank's backward done: its gradients are final
  const int64_t world = comm_.world_size(), rank = comm_.rank();
  for (auto& bucket : buckets_) {
    const Range& shard = own_shard(bucket);
    const auto shard_of = [&](int64_t r) {
      return bucket.peer_grads[r % world].narrow(0, shard.begin, shard.numel);
    };
    torch::add_out(bucket.summed_shard, shard_of(rank + 1), shard_of(rank + 2));
    for (int64_t k = 3; k <= world; ++k) bucket.summed_shard.add_(shard_of(rank + k));
  }
}

void GradSync::synchronize() {
  stats_ = Stats();
  stats_.started_in_backward = armed_ ? static_cast<int64_t>(next_to_start_) : 0;
  if (!armed_) next_to_start_ = 0;
  armed_ = false;
  const auto start = std::chrono::steady_clock::now();
  for (size_t k = 0; k < params_.size(); ++k) adopt_gradient(k);  // those that got none: zero
  if (node_shared_) {
    sum_shared_shards();
  } else {
    // With overlap every rank starts the rest non-blocking; without, every rank
    // runs MPI's faster blocking collectives (the two kinds never match each other).
    for (size_t b = next_to_start_; b < buckets_.size(); ++b) {
      if (options_.overlap)
        buckets_[b].work = launch(buckets_[b]);
      else
        complete(buckets_[b]);
    }
    next_to_start_ = buckets_.size();
  }
  for (auto& bucket : buckets_) {
    if (bucket.work) bucket.work->wait();
    bucket.work.reset();
  }
  stats_.wait_seconds = base::seconds_since(start);
}

torch::Tensor GradSync::sum_of_squares() const {
  torch::NoGradGuard no_grad;
  torch::Tensor sum = torch::zeros({}, buckets_.front().flat.options().dtype(torch::kDouble));
  for (const auto& bucket : buckets_)
    sum += bucket.norm_part.dot(bucket.norm_part).to(torch::kDouble);
  return sum;
}

void GradSync::gather_parameters() {
  if (node_shared_) {  // every rank's shard is updated in place: wait for the others' updates
    comm_.barrier();
    return;
  }
  for (auto& bucket : buckets_) comm_.allgather_in_place(bucket.flat_params);
}

std::vector<torch::Tensor> GradSync::to_shards(
    const std::vector<torch::Tensor>& per_parameter) const {
  if (!options_.shard) throw std::logic_error("GradSync::to_shards: the update is not sharded");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> shards;
  for (const auto& bucket : buckets_) {
    torch::Tensor flat = torch::zeros_like(bucket.flat);
    for (size_t j = 0; j < bucket.layout.params.size(); ++j) {
      const torch::Tensor& t = per_parameter.at(bucket.layout.params[j]);
      place_of(flat, bucket.layout.offsets[j], t).copy_(t);
    }
    const Range& shard = own_shard(bucket);
    shards.push_back(flat.narrow(0, shard.begin, shard.numel).clone());
  }
  return shards;
}

std::vector<std::vector<ShardPiece>> GradSync::shard_pieces() const {
  if (!options_.shard) throw std::logic_error("GradSync::shard_pieces: the update is not sharded");
  const std::vector<ParameterShape> shapes = shapes_of(params_);
  std::vector<std::vector<ShardPiece>> pieces;
  for (const auto& bucket : buckets_)
    pieces.push_back(pieces_in(bucket.layout, own_shard(bucket), shapes));
  return pieces;
}

GradScale clip_scale(const torch::Tensor& sum_of_squares, const torch::Tensor& divisor,
                     double max_norm) {
  const torch::Tensor norm = sum_of_squares.sqrt() / divisor;
  return {norm, (max_norm / (norm + 1e-6)).clamp_max(1.0) / divisor};
}

}  // namespace distributed
