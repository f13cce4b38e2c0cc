#include "trainer/runtime/cuda_devices.h"

#include <cstdio>
#include <stdexcept>

#include "build_options.h"
#if TRAINER_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

namespace runtime {

#if TRAINER_WITH_CUDA

namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

// cudaUUID_t's 16 bytes as nvidia-smi writes them: GPU-8-4-4-4-12 hex digits.
std::string uuid_text(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

}  // namespace

std::vector<std::string> visible_gpu_uuids() {
  int count = 0;
  // No driver or no GPU is "no GPU", as torch::cuda::is_available() says.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  std::vector<std::string> uuids;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp properties{};
    check(cudaGetDeviceProperties(&properties, i), "cudaGetDeviceProperties");
    uuids.push_back(uuid_text(properties.uuid));
  }
  return uuids;
}

GpuProperties gpu_properties(const torch::Device& device) {
  if (!device.is_cuda()) throw std::logic_error("gpu_properties(" + device.str() + "): not a GPU");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device.index()), "cudaGetDeviceProperties");
  return {properties.name, properties.major, properties.minor};
}

// Through c10, not cudaSetDevice alone: c10 keeps a per-thread "target"
// device of its own (c10/cuda/CUDAFunctions.cpp, MaybeSetDevice: CUDA 12+
// guards defer switching to a device without a context) that its
// current_device() and default streams follow; set_device sets both.
void make_current(const torch::Device& device) {
  if (device.is_cuda()) c10::cuda::set_device(device.index());
}

#else  // LibTorch without CUDA: no GPU to see or to choose

std::vector<std::string> visible_gpu_uuids() { return {}; }

GpuProperties gpu_properties(const torch::Device& device) {
  throw std::logic_error("gpu_properties(" + device.str() + ") in a build without CUDA");
}

void make_current(const torch::Device& device) {
  if (device.is_cuda())
    throw std::logic_error("make_current(" + device.str() + ") in a build without CUDA");
}

#endif

}  // namespace runtime
