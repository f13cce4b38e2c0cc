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
//
// Whether the step happens at all and the gradients' factor are decided on the
// parameters' device (train/step.h): 0-dim tensors there. ATen's fused kernel
// takes both as tensors (it skips the whole update when told to, and reads the
// step counts from tensors that the step increments on the device as
// torch.optim.Adam(fused=True) does), so a GPU step waits for nothing; the
// other two ways run on the CPU, where reading them costs nothing.
#pragma once
#include <map>

#include <torch/torch.h>

#include "trainer/checkpoint/optimizer_state.h"

namespace train {

// Which of the three ways above an AdamStep takes for `optimizer`'s groups.
enum class AdamKernel { kOnePassLoop, kFused, kTorchAdam };
AdamKernel adam_kernel(const torch::optim::Adam& optimizer);
const char* name(AdamKernel kernel);
// The threads the one-pass loop spreads over: LibTorch's thread count as
// this file's OpenMP runtime sees it (1 where it is built without OpenMP).
int one_pass_loop_threads();

class AdamStep {
 public:
  // Chooses its way once: the parameters' devices and dtypes are fixed by now.
  explicit AdamStep(torch::optim::Adam& optimizer);
  AdamKernel kernel() const { return kernel_; }

  // Steps every parameter of the optimizer that has a gradient, with learning
  // rate `lr`, on gradients times `grad_factor` (0-dim float64), unless
  // `skip` (0-dim bool); both on the parameters' device.
  void operator()(double lr, const torch::Tensor& grad_factor, const torch::Tensor& skip);
  // The fused kernel's step counts, kept on the device, into the optimizer's
  // state (AdamParamState::step), which is then current for a checkpoint.
  void write_step_counts();

 private:
  void fused(torch::optim::OptimizerParamGroup& group, const torch::Tensor& grad_factor,
             const torch::Tensor& skip);

  torch::optim::Adam& optimizer_;
  const AdamKernel kernel_;
  // Fused: each parameter's step count, float32 on its device, from the
  // state's count at its first fused step; the truth from then on.
  std::map<checkpoint::AdamStateKey, torch::Tensor> device_steps_;
};

}  // namespace train
