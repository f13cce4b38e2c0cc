#include "trainer/train/adam_step.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>

#include "trainer/train/adam_kernel.h"

namespace train {
namespace {

torch::optim::AdamParamState& state_or_zeros(torch::optim::Adam& optimizer,
                                             const torch::Tensor& p) {
  auto& slot = optimizer.state()[checkpoint::adam_state_key(p)];
  if (!slot) {  // first step: zero moments, as torch::optim::Adam starts them
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(0);
    s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    slot = std::move(s);
  }
  return static_cast<torch::optim::AdamParamState&>(*slot);
}

bool one_pass_loop_applies(const torch::optim::OptimizerParamGroup& group) {
  const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
  return options.weight_decay() == 0 && !options.amsgrad() &&
         std::all_of(group.params().begin(), group.params().end(), [](const torch::Tensor& p) {
           return p.device().is_cpu() && p.scalar_type() == torch::kFloat && p.is_contiguous();
         });
}

// Whether ATen has a fused Adam kernel for the group's device (CUDA; the CPU
// from LibTorch 2.4 on) and the group's tensors suit it (one floating dtype).
bool fused_kernel_applies(const torch::optim::OptimizerParamGroup& group) {
  const auto& params = group.params();
  if (params.empty()) return false;
  const auto& first = params.front();
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::_fused_adam_", "");
  return first.is_floating_point() &&
         op.hasKernelForDispatchKey(c10::computeDispatchKey(first.scalar_type(), first.layout(),
                                                            first.device())) &&
         std::all_of(params.begin(), params.end(), [&](const torch::Tensor& p) {
           return p.device() == first.device() && p.scalar_type() == first.scalar_type() &&
                  p.is_non_overlapping_and_dense();
         });
}

void one_pass_loop(torch::optim::Adam& optimizer, torch::optim::OptimizerParamGroup& group,
                   double grad_factor) {
  const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
  const auto [beta1, beta2] = options.betas();
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    auto& s = state_or_zeros(optimizer, p);
    s.step(s.step() + 1);
    const double t = static_cast<double>(s.step());
    const AdamCoefficients c{static_cast<float>(beta1),
                             static_cast<float>(beta2),
                             static_cast<float>(1 - beta1),
                             static_cast<float>(1 - beta2),
                             static_cast<float>(options.eps()),
                             static_cast<float>(grad_factor),
                             static_cast<float>(-options.lr() / (1 - std::pow(beta1, t))),
                             static_cast<float>(std::sqrt(1 - std::pow(beta2, t)))};
    const torch::Tensor grad = p.grad().contiguous();
    float* param = p.data_ptr<float>();
    const float* g = grad.data_ptr<float>();
    float* m = s.exp_avg().data_ptr<float>();
    float* v = s.exp_avg_sq().data_ptr<float>();
    // Chunks of 32k elements over LibTorch's threads (this file is built with
    // -fopenmp: CMakeLists.txt says why).
    at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
      adam_update(param + begin, g + begin, m + begin, v + begin, end - begin, c);
    });
  }
}

}  // namespace

AdamKernel adam_kernel(const torch::optim::Adam& optimizer) {
  const auto& groups = optimizer.param_groups();
  if (std::all_of(groups.begin(), groups.end(), one_pass_loop_applies))
    return AdamKernel::kOnePassLoop;
  if (std::all_of(groups.begin(), groups.end(), fused_kernel_applies)) return AdamKernel::kFused;
  return AdamKernel::kTorchAdam;
}

const char* name(AdamKernel kernel) {
  switch (kernel) {
    case AdamKernel::kOnePassLoop: return "one-pass CPU loop";
    case AdamKernel::kFused: return "ATen's fused kernel";
    case AdamKernel::kTorchAdam: return "torch::optim::Adam";
  }
  return "?";
}

int one_pass_loop_threads() {
#if AT_PARALLEL_OPENMP && defined(_OPENMP)
  return omp_get_max_threads();  // the team at::parallel_for's region starts here
#elif AT_PARALLEL_OPENMP
  return 1;
#else
  return at::get_num_threads();  // ATen's own thread pool, in LibTorch's library
#endif
}

AdamStep::AdamStep(torch::optim::Adam& optimizer)
    : optimizer_(optimizer), kernel_(adam_kernel(optimizer)) {}

void AdamStep::operator()(double lr, const torch::Tensor& grad_factor, const torch::Tensor& skip) {
  torch::NoGradGuard no_grad;
  auto& groups = optimizer_.param_groups();
  for (auto& group : groups) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  if (kernel_ == AdamKernel::kFused) {
    for (auto& group : groups) fused(group, grad_factor, skip);
    return;
  }
  // The other ways take the decision as numbers: on the CPU, a read costs nothing.
  if (skip.item<bool>()) return;
  const double factor = grad_factor.item<double>();
  if (kernel_ == AdamKernel::kOnePassLoop) {
    for (auto& group : groups) one_pass_loop(optimizer_, group, factor);
    return;
  }
  for (auto& group : groups)
    for (auto& p : group.params())
      if (p.grad().defined()) p.mutable_grad().mul_(factor);
  optimizer_.step();
}

// ATen's multi-tensor Adam (torch.optim.Adam(fused=True)): a few kernel
// launches for the whole group instead of several per parameter. It divides
// each gradient by `grad_scale` as it reads it, does nothing where `found_inf`
// is 1, and reads the step counts from tensors (which it does not increment).
void AdamStep::fused(torch::optim::OptimizerParamGroup& group, const torch::Tensor& grad_factor,
                     const torch::Tensor& skip) {
  const auto& options = static_cast<const torch::optim::AdamOptions&>(group.options());
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    auto& s = state_or_zeros(optimizer_, p);
    if (options.amsgrad() && !s.max_exp_avg_sq().defined())
      s.max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    auto& t = device_steps_[checkpoint::adam_state_key(p)];
    if (!t.defined())
      t = torch::full({}, static_cast<double>(s.step()), p.options().dtype(torch::kFloat));
    params.push_back(p);
    grads.push_back(p.grad());
    exp_avgs.push_back(s.exp_avg());
    exp_avg_sqs.push_back(s.exp_avg_sq());
    if (options.amsgrad()) max_exp_avg_sqs.push_back(s.max_exp_avg_sq());
    steps.push_back(t);
  }
  if (params.empty()) return;
  const torch::Tensor found_inf = skip.to(torch::kFloat);
  const torch::Tensor taken = skip.logical_not().to(torch::kFloat);  // 1: the step counts
  at::_foreach_add_(steps, std::vector<torch::Tensor>(steps.size(), taken));
  const auto [beta1, beta2] = options.betas();
  at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(),
                   beta1, beta2, options.weight_decay(), options.eps(), options.amsgrad(),
                   /*maximize=*/false, grad_factor.reciprocal().to(torch::kFloat), found_inf);
}

void AdamStep::write_step_counts() {
  for (const auto& [key, t] : device_steps_) {
    const auto it = optimizer_.state().find(key);
    if (it != optimizer_.state().end())
      static_cast<torch::optim::AdamParamState&>(*it->second)
          .step(static_cast<int64_t>(t.item<float>()));
  }
}

}  // namespace train
