// One step under LibTorch's Kineto profiler (CUPTI on a GPU): where the
// device's time goes, kernel by kernel, and how many launches the host
// makes. For the benchmark programs (train_step_bench: KERNEL_PROFILE=<file>).
//
// Written as one JSON object: the device's events (kernels, copies, memsets:
// Kinetos events whose device is not the CPU) grouped by name, the `top` by
// total time with their calls and share; their count per step; the host's
// launch calls (CUDA runtime or driver events named *LaunchKernel*); the
// device's busy time and the step's wall time. On a CPU there are no device
// events: the top lists the CPU's operators instead, nested ones counted
// inside their callers too (the dry run's check that the profiler works).
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace bench {

// Runs `step` (which must end with the device synchronised) once under the
// profiler and writes the summary to `path`. Returns false where this
// LibTorch has no Kineto API to call (1.x).
inline bool write_kernel_profile(const std::function<void()>& step, const torch::Device& device,
                                 const std::string& path, size_t top = 15) {
#if TORCH_VERSION_MAJOR >= 2
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  std::set<ActivityType> activities = {ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  const auto start = std::chrono::steady_clock::now();
  step();
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto result = prof::disableProfiler();

  struct Group {
    int64_t calls = 0;
    double ms = 0;
  };
  std::map<std::string, Group> on_device, cpu_ops;
  int64_t device_events = 0, launches = 0;
  double device_ms = 0;
  for (const auto& e : result->events()) {
    const std::string name = e.name();
    const double ms = static_cast<double>(e.durationNs()) / 1e6;
    if (e.deviceType() != c10::DeviceType::CPU) {
      Group& g = on_device[name];
      ++g.calls, g.ms += ms, ++device_events, device_ms += ms;
    } else if (name.find("LaunchKernel") != std::string::npos) {
      ++launches;
    } else {
      Group& g = cpu_ops[name];
      ++g.calls, g.ms += ms;
    }
  }
  const auto& groups = on_device.empty() ? cpu_ops : on_device;
  std::vector<std::pair<std::string, Group>> ranked(groups.begin(), groups.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  double total_ms = 0;
  for (const auto& [name, g] : ranked) total_ms += g.ms;

  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return false;
  std::fprintf(out,
               "{\"what\": \"%s\", \"device_events\": %lld, \"launches\": %lld, "
               "\"device_busy_ms\": %.3f, \"wall_ms\": %.3f, \"top\": [",
               on_device.empty() ? "cpu operators" : "device kernels",
               static_cast<long long>(device_events), static_cast<long long>(launches), device_ms,
               wall_ms);
  for (size_t i = 0; i < std::min(top, ranked.size()); ++i) {
    std::string name = ranked[i].first;  // JSON-safe: kernel names carry templates, not quotes
    std::replace(name.begin(), name.end(), '"', '\'');
    std::replace(name.begin(), name.end(), '\\', '/');
    std::fprintf(out, "%s{\"name\": \"%s\", \"calls\": %lld, \"ms\": %.3f, \"share\": %.4f}",
                 i ? ", " : "", name.c_str(), static_cast<long long>(ranked[i].second.calls),
                 ranked[i].second.ms, total_ms > 0 ? ranked[i].second.ms / total_ms : 0.0);
  }
  std::fprintf(out, "]}\n");
  std::fclose(out);
  return true;
#else
  (void)step, (void)device, (void)path, (void)top;
  return false;
#endif
}

}  // namespace bench
