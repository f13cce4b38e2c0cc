// The device a rank computes on: cuda:<local rank> when LibTorch has CUDA
// and the node has a GPU for this rank, else the CPU.
#pragma once
#include <torch/torch.h>

#include "launch/process.h"

namespace runtime {

torch::Device select_device(const launch::ProcessInfo& info);

}  // namespace runtime
