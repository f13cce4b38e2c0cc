#include "trainer/train/adam_step.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

#include "trainer/train/adam_kernel.h"

namespace train {
namespace {

torch::optim::AdamParamState& state_of(torch::optim::Adam& optimizer, const torch::Tensor& p) {
  auto& slot = optimizer.state()[adam_state_key(p)];
  if (!slot) {  // first step: zero moments, as torch::optim::Adam starts them
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(0);
    s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    slot = std::move(s);
  }
  return static_cast<torch::optim::AdamParamState&>(*slot);
}

template <typename Key>  // a template, so that only the matching branch is compiled
Key state_key(const torch::Tensor& param) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream address;
    address << param.unsafeGetTensorImpl();
    return address.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

}  // namespace

AdamStateKey adam_state_key(const torch::Tensor& param) { return state_key<AdamStateKey>(param); }

void adam_step(torch::optim::Adam& optimizer, double lr, double grad_scale) {
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    auto& options = static_cast<torch::optim::AdamOptions&>(group.options());
    options.lr(lr);
    const bool fused = std::all_of(group.params().begin(), group.params().end(), [](auto& p) {
      return p.device().is_cpu() && p.scalar_type() == torch::kFloat && p.is_contiguous();
    });
    if (!fused || options.weight_decay() != 0 || options.amsgrad()) {
      for (auto& p : group.params())
        if (p.grad().defined()) p.mutable_grad().mul_(grad_scale);
      optimizer.step();
      continue;
    }
    const auto [beta1, beta2] = options.betas();
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& s = state_of(optimizer, p);
      s.step(s.step() + 1);
      const double t = static_cast<double>(s.step());
      const AdamCoefficients c{static_cast<float>(beta1),
                               static_cast<float>(beta2),
                               static_cast<float>(1 - beta1),
                               static_cast<float>(1 - beta2),
                               static_cast<float>(options.eps()),
                               static_cast<float>(grad_scale),
                               static_cast<float>(-lr / (1 - std::pow(beta1, t))),
                               static_cast<float>(std::sqrt(1 - std::pow(beta2, t)))};
      const torch::Tensor grad = p.grad().contiguous();
      float* param = p.data_ptr<float>();
      const float* g = grad.data_ptr<float>();
      float* m = s.exp_avg().data_ptr<float>();
      float* v = s.exp_avg_sq().data_ptr<float>();
      at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
        adam_update(param + begin, g + begin, m + begin, v + begin, end - begin, c);
      });
    }
  }
}

}  // namespace train
