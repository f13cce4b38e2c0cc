// One step of torch::optim::Adam's mathematics (Kingma & Ba, with the paper's
// bias corrections, as LibTorch computes it) on gradients that still need a
// factor, the global batch's 1 / target tokens times the clip coefficient:
//
//   g = grad * grad_scale
//   m = beta1 m + (1 - beta1) g            v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// The moments stay in the optimizer's own state (torch::optim::AdamParamState),
// so checkpoints read and write them as before (checkpoint/optimizer_state.h).
// On the CPU, for float32 parameters, each element is read and written once
// (parameter, gradient, both moments), in parallel over the intra-op threads:
// torch::optim::Adam's step makes about seven passes and allocates two
// parameter-sized temporaries per tensor, and the gradients' scaling is one
// more pass. Elsewhere (a GPU): the gradients are scaled in place, then
// torch::optim::Adam steps.
#pragma once
#include <torch/torch.h>

namespace train {

// The optimizer's state key of a parameter (a TensorImpl pointer in LibTorch
// >= 2.4, its printed address in 1.13).
using AdamStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
AdamStateKey adam_state_key(const torch::Tensor& param);

// Steps every parameter of `optimizer` that has a gradient, with learning rate `lr`.
void adam_step(torch::optim::Adam& optimizer, double lr, double grad_scale);

}  // namespace train
