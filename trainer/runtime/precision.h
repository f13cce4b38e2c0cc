// Mixed precision (train.precision):
//
//   fp32  everything in float32.
//   bf16  the forward pass runs under autocast to bfloat16: matrix products
//         (linear, matmul) take bfloat16 copies of their operands, so oneDNN
//         uses the CPU's bfloat16 units (AVX512-BF16, AMX) and CUDA its tensor
//         cores; reductions that need range (log-softmax, the loss) stay
//         float32. Parameters, gradients, Adam moments and checkpoints stay
//         float32 ("master weights"): autograd casts each gradient back to the
//         dtype of its parameter. bfloat16 has float32's exponent range, so no
//         loss scaling is needed.
//   fp16  as bf16 with float16, for GPUs without bfloat16 (V100, T4): CUDA
//         only; its 5-bit exponent needs the dynamic loss scale of
//         train/loss_scaler.h.
//   auto  (the default) bf16 where the device computes in bfloat16 natively,
//         else fp32: CUDA GPUs of compute capability 8.0 and later (A100,
//         H100: bf16 tensor cores); CPUs with AVX512-BF16 or AMX, where
//         oneDNN's bf16 GEMMs are faster than fp32, while CPUs without them
//         emulate bfloat16, far slower (docs/performance.md). fp16 is never
//         chosen: its loss scale is a trade a user makes knowingly.
#pragma once
#include <torch/torch.h>

#include <string>

#include "trainer/choices/compute.h"

namespace runtime {

// "fp32" | "bf16" | "fp16"; anything else throws std::invalid_argument.
choices::Precision parse_precision(const std::string& name);
const std::string& precision_name(choices::Precision precision);

// train.precision for `device`: auto decided as above, the others kept;
// `reason` says why, for the log.
struct PrecisionChoice {
  choices::Precision precision;
  std::string reason;
  std::string warning = "";  // a choice that will cost: bf16 asked for on a CPU that emulates it
};
PrecisionChoice choose_precision(choices::Precision setting, const torch::Device& device);

// Autocast for the forward pass and loss of one micro-batch on `device`, for
// the lifetime of the scope (a no-op for fp32). Leaving the outermost scope
// drops the cached low-precision copies of the weights, which change every step.
class AutocastScope {
 public:
  AutocastScope(choices::Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_ = false;
  c10::DeviceType device_type_ = c10::DeviceType::CPU;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// train.tf32: fp32 matrix products and cuDNN convolutions on CUDA in TF32
// (tensor cores, fp32's range, a 10-bit mantissa) or in IEEE fp32 (false,
// LibTorch's default). Process-wide; no effect on CPUs.
void use_tf32(bool on);

}  // namespace runtime
