#include "trainer/distributed/grad_sync.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

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

  torch::NoGradGuard no_grad;
  for (const auto& group : groups) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t k : group) numel += params_[k].numel();
    bucket.flat = torch::zeros({numel}, params_[group.front()].options());
    int64_t offset = 0;
    for (size_t k : group) {
      const int64_t n = params_[k].numel();
      params_[k].mutable_grad() = bucket.flat.narrow(0, offset, n).view_as(params_[k]);
      bucket_of_[k] = buckets_.size();
      offset += n;
    }
    bucket.params = group;
    buckets_.push_back(std::move(bucket));
  }

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
  for (auto& bucket : buckets_) bucket.flat.zero_();
}

void GradSync::prepare(bool last) {
  armed_ = last && options_.overlap;
  if (!armed_) return;
  std::fill(done_.begin(), done_.end(), false);
  for (auto& bucket : buckets_) bucket.pending = bucket.params.size();
  next_to_start_ = 0;
}

void GradSync::on_gradient_ready(size_t param) {
  if (!armed_ || done_[param]) return;
  done_[param] = true;
  if (--buckets_[bucket_of_[param]].pending == 0) start_ready_buckets();
  // MPI advances non-blocking collectives only inside MPI calls: poke the
  // ones in flight so they progress while backward computes.
  for (size_t b = 0; b < next_to_start_; ++b) buckets_[b].work->test();
}

void GradSync::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].pending == 0) {
    Bucket& bucket = buckets_[next_to_start_++];
    bucket.work = comm_.iallreduce_sum(bucket.flat);
  }
}

void GradSync::synchronize() {
  stats_ = Stats();
  stats_.started_in_backward = armed_ ? static_cast<int64_t>(next_to_start_) : 0;
  if (!armed_) next_to_start_ = 0;
  armed_ = false;
  for (size_t b = next_to_start_; b < buckets_.size(); ++b)
    buckets_[b].work = comm_.iallreduce_sum(buckets_[b].flat);
  next_to_start_ = buckets_.size();

  const auto start = std::chrono::steady_clock::now();
  for (auto& bucket : buckets_) {
    bucket.work->wait();
    bucket.work.reset();
  }
  stats_.wait_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

torch::Tensor GradSync::scale_and_clip(const torch::Tensor& divisor, double max_norm) {
  // One pass for the norm, one to scale: g = sum / divisor, times the clip
  // coefficient max / (norm + 1e-6) when that is below 1. All on the
  // gradients' device, nothing read back: the host does not wait here.
  torch::NoGradGuard no_grad;
  torch::Tensor sum_squares = torch::zeros({}, divisor.options().dtype(torch::kDouble));
  for (const auto& bucket : buckets_)
    sum_squares += bucket.flat.dot(bucket.flat).to(torch::kDouble);
  const torch::Tensor norm = sum_squares.sqrt() / divisor;
  const torch::Tensor clip = (max_norm / (norm + 1e-6)).clamp_max(1.0);
  const torch::Tensor scale = clip / divisor;
  for (auto& bucket : buckets_) bucket.flat.mul_(scale);
  return norm;
}

}  // namespace distributed
