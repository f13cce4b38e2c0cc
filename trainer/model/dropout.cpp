#include "trainer/model/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "trainer/model/dropout_mask.h"

namespace model {
namespace {

// One draw of LibTorch's default CPU generator, as its own kernels take one.
uint64_t next_seed() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle on the one generator
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

bool drawn_here(const torch::Tensor& x) {
  const auto t = x.scalar_type();
  return x.device().is_cpu() && (t == torch::kFloat || t == torch::kBFloat16 || t == torch::kHalf);
}

template <typename T>
uint16_t bits_of(float value) {
  const T rounded(value);
  uint16_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return bits;
}

}  // namespace

DropoutImpl::DropoutImpl(double p) : p_(p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1), got ", p);
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ == 0.0) return x;
  if (!drawn_here(x)) return torch::dropout(x, p_, /*train=*/true);
  return x * dropout_mask(x.sizes(), x.scalar_type(), p_, next_seed());
}

torch::Tensor dropout_mask(torch::IntArrayRef sizes, torch::ScalarType dtype, double p,
                           uint64_t seed) {
  auto mask = torch::empty(sizes, torch::dtype(dtype));
  const double below = std::round(p * 4294967296.0);  // p of the 2^32 draws dropped
  const auto drop_below = static_cast<uint32_t>(std::min(below, 4294967295.0));
  const auto kept = static_cast<float>(1.0 / (1.0 - p));
  // Each element's draw depends on its index alone: any split over the
  // threads gives the same mask. About 2^15 elements a piece.
  const auto fill = [&](auto* out, auto kept_value) {
    at::parallel_for(0, mask.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
      model::dropout_mask(out + begin, begin, end, seed, drop_below, kept_value);
    });
  };
  if (dtype == torch::kFloat)
    fill(mask.data_ptr<float>(), kept);
  else if (dtype == torch::kBFloat16)
    fill(reinterpret_cast<uint16_t*>(mask.data_ptr()), bits_of<c10::BFloat16>(kept));
  else if (dtype == torch::kHalf)
    fill(reinterpret_cast<uint16_t*>(mask.data_ptr()), bits_of<c10::Half>(kept));
  else
    TORCH_CHECK(false, "dropout_mask: float32, bfloat16 or float16, not ", dtype);
  return mask;
}

}  // namespace model
