#include "trainer/distributed/grad_sync.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

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

GradSync::GradSync(const std::vector<torch::Tensor>& params, Communicator& comm,
                   GradSyncOptions options)
    : params_(params),
      comm_(comm),
      options_(options),
      bucket_of_(params.size()),
      grad_views_(params.size()),
      done_(params.size(), false) {
  if (options_.bucket_bytes <= 0) throw std::invalid_argument("GradSync: bucket_bytes must be > 0");

  // Buckets: parameters in reverse order, a new bucket when the current one is
  // full or the dtype/device changes.
  std::vector<std::vector<size_t>> groups;
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const torch::Tensor& p = params_[k];
    if (!p.requires_grad() || !p.is_leaf())
      throw std::invalid_argument("GradSync: parameter " + std::to_string(k) +
                                  " is not a leaf that requires grad");
    const bool fits = !groups.empty() && bytes < options_.bucket_bytes &&
                      params_[groups.back().front()].options().dtype() == p.options().dtype() &&
                      params_[groups.back().front()].device() == p.device();
    if (!fits) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(k);
    bytes += p.numel() * static_cast<int64_t>(p.element_size());
  }

  // Every parameter starts on a 64-byte line (16 float32) of its bucket, and
  // sharded buckets split into world_size equal shards of whole lines.
  torch::NoGradGuard no_grad;
  const int64_t world = comm_.world_size(), rank = comm_.rank();
  const auto round_up = [](int64_t n, int64_t to) { return (n + to - 1) / to * to; };
  const int64_t align = options_.shard ? world * 16 : 1;
  int64_t total = 0;  // all buckets' elements
  for (const auto& group : groups) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t k : group) {
      numel = round_up(numel, 16);
      bucket.offsets.push_back(numel);
      numel += params_[k].numel();
    }
    bucket.params = group;
    bucket.numel = numel;
    total += round_up(numel, align);
    buckets_.push_back(std::move(bucket));
  }
  const std::optional<torch::Tensor> shared = node_shared_buffers(total);
  node_shared_ = shared.has_value();

  int64_t start = 0;  // of the bucket in the shared regions
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    const auto options = params_[bucket.params.front()].options();
    const int64_t padded = round_up(bucket.numel, align);
    if (shared) {  // [parameters | rank 0's gradients | rank 1's | ...], each `total` long
      for (int64_t r = 0; r < world; ++r)
        bucket.peer_grads.push_back(shared->narrow(0, total * (1 + r) + start, padded));
      bucket.flat = bucket.peer_grads[rank];
      bucket.flat_params = shared->narrow(0, start, padded);
      start += padded;
    } else {
      bucket.flat = torch::zeros({padded}, options);
      if (options_.shard) bucket.flat_params = torch::zeros_like(bucket.flat);
    }
    for (size_t j = 0; j < bucket.params.size(); ++j) {
      torch::Tensor& p = params_[bucket.params[j]];
      grad_views_[bucket.params[j]] =
          bucket.flat.narrow(0, bucket.offsets[j], p.numel()).view_as(p);
      p.mutable_grad() = grad_views_[bucket.params[j]];
      if (options_.shard) {  // the parameter's values move into the bucket, which it then views
        torch::Tensor view = bucket.flat_params.narrow(0, bucket.offsets[j], p.numel()).view_as(p);
        if (!shared || rank == 0) view.copy_(p);  // shared: every rank's values are rank 0's
        p.set_data(view);
      }
      bucket_of_[bucket.params[j]] = b;
    }
    if (options_.shard) {
      const int64_t n = padded / world;
      bucket.grad_shard = world == 1 ? bucket.flat : torch::empty({n}, options);
      shard_params_.push_back(bucket.flat_params.narrow(0, rank * n, n).detach());
      shard_params_.back().mutable_grad() = bucket.grad_shard;
    } else {  // every rank has all gradients; each takes its part of the norm
      const int64_t begin = bucket.numel * rank / world, end = bucket.numel * (rank + 1) / world;
      bucket.grad_shard = bucket.flat.narrow(0, begin, end - begin);
    }
  }
  if (shared) comm_.barrier();  // rank 0's parameter values in place for every rank

  // A post hook on each parameter's AccumulateGrad node runs right after
  // autograd has added this backward's gradient into .grad.
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
  for (const auto& bucket : buckets_) layout.push_back(bucket.params);
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
  for (auto& bucket : buckets_) bucket.pending = bucket.params.size();
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
  return options_.shard ? comm_.ireduce_scatter_sum(bucket.flat, bucket.grad_shard)
                        : comm_.iallreduce_sum(bucket.flat);
}

void GradSync::complete(Bucket& bucket) {
  if (options_.shard)
    comm_.reduce_scatter_sum(bucket.flat, bucket.grad_shard);
  else
    comm_.allreduce_sum(bucket.flat);
}

std::optional<torch::Tensor> GradSync::node_shared_buffers(int64_t total) {
  const bool cpu_float = std::all_of(params_.begin(), params_.end(), [](const torch::Tensor& p) {
    return p.device().is_cpu() && p.scalar_type() == torch::kFloat;
  });
  if (!options_.shard || !options_.node_shared || comm_.world_size() == 1 || !cpu_float)
    return std::nullopt;
  return node_shared_memory(comm_, total * (1 + comm_.world_size()));
}

// In the MPI ring's order (mpi_ring.cpp): shard r is
// (((x[r+1] + x[r+2]) + x[r+3]) + ... ) + x[r], ranks mod world, so that the
// sum is bitwise the same whether the ranks share a node or not.
void GradSync::sum_shared_shards() {
  comm_.barrier();  // every rank's backward done: its gradients are final
  const int64_t world = comm_.world_size(), rank = comm_.rank();
  for (auto& bucket : buckets_) {
    const int64_t n = shard_numel(bucket), begin = rank * n;
    const auto shard_of = [&](int64_t r) {
      return bucket.peer_grads[r % world].narrow(0, begin, n);
    };
    torch::add_out(bucket.grad_shard, shard_of(rank + 1), shard_of(rank + 2));
    for (int64_t k = 3; k <= world; ++k) bucket.grad_shard.add_(shard_of(rank + k));
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
  stats_.wait_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

torch::Tensor GradSync::sum_of_squares() const {
  torch::NoGradGuard no_grad;
  torch::Tensor sum = torch::zeros({}, buckets_.front().flat.options().dtype(torch::kDouble));
  for (const auto& bucket : buckets_)
    sum += bucket.grad_shard.dot(bucket.grad_shard).to(torch::kDouble);
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
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> shards;
  for (const auto& bucket : buckets_) {
    torch::Tensor flat = torch::zeros_like(bucket.flat);
    for (size_t j = 0; j < bucket.params.size(); ++j) {
      const torch::Tensor& t = per_parameter.at(bucket.params[j]);
      flat.narrow(0, bucket.offsets[j], t.numel()).copy_(t.reshape({-1}));
    }
    const int64_t n = shard_numel(bucket);
    shards.push_back(flat.narrow(0, comm_.rank() * n, n).clone());
  }
  return shards;
}

std::vector<torch::Tensor> GradSync::from_shards(const std::vector<torch::Tensor>& shards) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> per_parameter(params_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    const int64_t n = shard_numel(bucket);
    torch::Tensor flat = torch::empty_like(bucket.flat);
    flat.narrow(0, comm_.rank() * n, n).copy_(shards.at(b));
    comm_.allgather_in_place(flat);
    for (size_t j = 0; j < bucket.params.size(); ++j) {
      const torch::Tensor& p = params_[bucket.params[j]];
      per_parameter[bucket.params[j]] = flat.narrow(0, bucket.offsets[j], p.numel()).view_as(p);
    }
  }
  return per_parameter;
}

GradScale clip_scale(const torch::Tensor& sum_of_squares, const torch::Tensor& divisor,
                     double max_norm) {
  const torch::Tensor norm = sum_of_squares.sqrt() / divisor;
  return {norm, (max_norm / (norm + 1e-6)).clamp_max(1.0) / divisor};
}

}  // namespace distributed
