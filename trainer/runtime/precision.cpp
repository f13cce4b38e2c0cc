#include "trainer/runtime/precision.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "trainer/runtime/cuda_devices.h"

namespace runtime {

using choices::Precision;

namespace {

// The CPU's bfloat16 instructions, as the kernel lists them (/proc/cpuinfo
// flags: avx512_bf16, amx_bf16); "" where it has neither (or no such file).
std::string cpu_bf16_instructions() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream flags(line.substr(line.find(':') + 1));
    std::string flag, found;
    while (flags >> flag)
      if (flag == "avx512_bf16" || flag == "amx_bf16")
        found += (found.empty() ? "" : " and ") + flag;
    return found;
  }
  return "";
}

// Autocast state per device type. LibTorch ≥ 2.4 takes the device type;
// 1.13 (Debian's) has one function pair per device, now deprecated.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void set_autocast_enabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
at::ScalarType autocast_dtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void set_autocast_dtype(c10::DeviceType d, at::ScalarType t) {
  at::autocast::set_autocast_dtype(d, t);
}
#else
bool autocast_enabled(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(c10::DeviceType d, bool on) {
  d == c10::DeviceType::CUDA ? at::autocast::set_enabled(on) : at::autocast::set_cpu_enabled(on);
}
at::ScalarType autocast_dtype(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                    : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype(c10::DeviceType d, at::ScalarType t) {
  d == c10::DeviceType::CUDA ? at::autocast::set_autocast_gpu_dtype(t)
                             : at::autocast::set_autocast_cpu_dtype(t);
}
#endif

}  // namespace

// LibTorch ≥ 2.9 sets precision per backend and operation (2.9 by name, 2.10
// on by enums); the older allow-TF32 switches are deprecated there.
void use_tf32(bool on) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 10)
  const auto precision = on ? at::Float32Precision::TF32 : at::Float32Precision::IEEE;
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL,
                                          precision);
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV, precision);
#elif TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 9
  const std::string precision = on ? "tf32" : "ieee";
  at::globalContext().setFloat32Precision("cuda", "matmul", precision);
  at::globalContext().setFloat32Precision("cuda", "conv", precision);
#else
  at::globalContext().setAllowTF32CuBLAS(on);
  at::globalContext().setAllowTF32CuDNN(on);
#endif
}

Precision parse_precision(const std::string& name) {
  const auto& names = choices::kPrecisionNames;
  const auto named = std::find_if(names.begin(), names.end(),
                                  [&](const auto& entry) { return entry.first == name; });
  if (named == names.end() || named->second == Precision::kAuto)
    throw std::invalid_argument("precision must be fp32, bf16 or fp16, got '" + name + "'");
  return named->second;
}

const std::string& precision_name(Precision precision) {
  return settings::name_of(choices::kPrecisionNames, precision);
}

PrecisionChoice choose_precision(Precision setting, const torch::Device& device) {
  if (setting != Precision::kAuto) {
    PrecisionChoice chosen{setting, "train.precision = " + precision_name(setting)};
    if (setting == Precision::kBf16 && device.is_cpu() && cpu_bf16_instructions().empty())
      chosen.warning =
          "train.precision = bf16 on a CPU without bfloat16 instructions (no avx512_bf16 or "
          "amx_bf16 in /proc/cpuinfo): oneDNN emulates them, and a step takes several times "
          "as long as in fp32; fp32, or auto, trains faster here";
    return chosen;
  }
  if (device.is_cuda()) {
    const GpuProperties gpu = gpu_properties(device);
    const std::string what = device.str() + " (" + gpu.name + ", compute capability " +
                             std::to_string(gpu.major) + "." + std::to_string(gpu.minor) + ")";
    return gpu.major >= 8
               ? PrecisionChoice{Precision::kBf16, "auto: " + what + " has bfloat16 tensor cores"}
               : PrecisionChoice{Precision::kFp32, "auto: " + what + " has no bfloat16"};
  }
  const std::string bf16 = cpu_bf16_instructions();
  return bf16.empty() ? PrecisionChoice{Precision::kFp32,
                                        "auto: this CPU has no bfloat16 instructions (oneDNN would "
                                        "emulate them)"}
                      : PrecisionChoice{Precision::kBf16, "auto: this CPU has " + bf16};
}

AutocastScope::AutocastScope(Precision precision, const torch::Device& device)
    : enabled_(precision != Precision::kFp32), device_type_(device.type()) {
  if (!enabled_) return;
  was_enabled_ = autocast_enabled(device_type_);
  previous_dtype_ = autocast_dtype(device_type_);
  set_autocast_dtype(device_type_, precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
  set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(device_type_, was_enabled_);
  set_autocast_dtype(device_type_, previous_dtype_);
}

}  // namespace runtime
