// One step of torch::optim::Adam's mathematics (Kingma & Ba, with the paper's
// bias corrections, as LibTorch computes it) on gradients that still need a
// factor, the global batch's 1 / target tokens times the clip coefficient:
//
//   g = grad * grad_factor
//   m = beta1 m + (1 - beta1) g            v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// The moments stay in the optimizer's own state (torch::optim::AdamParamState),
// so checkpoints read and write them as before (checkpoint/optimizer_state.h).
// Three ways, the first that applies to every parameter group:
//   - the CPU, float32, no weight decay (the trainer's case there): each
//     element is read and written once (parameter, gradient, both moments),
//     in parallel over the intra-op threads; torch::optim::Adam's step makes
//     about seven passes and allocates two parameter-sized temporaries per
//     tensor, and the gradients' scaling is one more pass;
//   - where ATen has a fused kernel for the parameters' device (CUDA; the CPU
//     from LibTorch 2.4): at::_fused_adam_, a few launches for all parameters,
//     the factor applied as it reads each gradient;
//   - else the gradients are scaled in place, then torch::optim::Adam steps.
#pragma once
#include <torch/torch.h>

namespace train {

// The optimizer's state key of a parameter (a TensorImpl pointer in LibTorch
// >= 2.4, its printed address in 1.13).
using AdamStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
AdamStateKey adam_state_key(const torch::Tensor& param);

// Which of the three ways above adam_step takes for `optimizer`'s groups.
enum class AdamKernel { kOnePassLoop, kFused, kTorchAdam };
AdamKernel adam_kernel(const torch::optim::Adam& optimizer);
const char* name(AdamKernel kernel);

// Steps every parameter of `optimizer` that has a gradient, with learning rate `lr`.
void adam_step(torch::optim::Adam& optimizer, double lr, double grad_factor);

}  // namespace train
