// What this process asks CUDA about its GPUs (nothing in a build without CUDA).
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

namespace runtime {

// The UUIDs of the GPUs this process sees, in CUDA's order ("GPU-xxxxxxxx-...",
// as nvidia-smi -L prints them): what a GPU is, whatever CUDA_VISIBLE_DEVICES
// or a device cgroup calls it. Empty without CUDA or without a GPU.
std::vector<std::string> visible_gpu_uuids();

// What CUDA says of a GPU: its name and compute capability (8.0 and later:
// bfloat16 and TF32 tensor cores). Throws for a CPU device or a build without CUDA.
struct GpuProperties {
  std::string name;
  int major = 0, minor = 0;
};
GpuProperties gpu_properties(const torch::Device& device);

// `device` becomes the calling thread's current CUDA device (cudaSetDevice):
// the main thread's, set once at start-up. Nothing for a CPU device.
void make_current(const torch::Device& device);

}  // namespace runtime
