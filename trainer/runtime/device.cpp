#include "trainer/runtime/device.h"

#include <spdlog/spdlog.h>

namespace runtime {

torch::Device select_device(const launch::ProcessInfo& info) {
  if (!torch::cuda::is_available()) return torch::kCPU;
  const int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
  if (info.local_rank >= gpus) {
    spdlog::warn("{} ranks on node {} but {} GPU(s): rank {} computes on the CPU",
                 info.local_size, info.node, gpus, info.rank);
    return torch::kCPU;
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(info.local_rank));
}

}  // namespace runtime
