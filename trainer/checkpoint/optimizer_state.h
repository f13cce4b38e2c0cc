// Adam's state in a checkpoint: a state dict of CPU tensors keyed by the
// parameter's name, which Python's torch.load reads and any device loads:
//
//   {"<parameter>.exp_avg": m, "<parameter>.exp_avg_sq": v, "<parameter>.step": int64 []}
//
// (no entries for a parameter Adam has not stepped yet). Loading puts every
// moment on its parameter's device, so a checkpoint written by rank 0 on
// cuda:0 resumes on cuda:1, on another number of GPUs, or on a CPU-only host.
#pragma once
#include <string>

#include <torch/torch.h>

#include "trainer/checkpoint/state_dict.h"

namespace checkpoint {

// The optimizer's state key of a parameter (a TensorImpl pointer in LibTorch
// >= 2.4, its printed address in 1.13).
using AdamStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
AdamStateKey adam_state_key(const torch::Tensor& param);

// The state dict above (the live moments; the step counts as new tensors),
// for save_tensors (state_dict.h).
NamedTensors optimizer_tensors(torch::optim::Adam& optimizer, const torch::nn::Module& model);

// Replaces the optimizer's state. A moment whose shape differs from its
// parameter's, or a name that is not a parameter, is an error naming both.
void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const std::string& path);

}  // namespace checkpoint
