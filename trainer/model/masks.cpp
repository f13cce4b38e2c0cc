#include "trainer/model/masks.h"

#include <limits>

namespace model {

torch::Tensor make_src_mask(const torch::Tensor& src, int64_t pad) {
  return (src != pad).unsqueeze(1).unsqueeze(2);  // [B, 1, 1, S]
}

torch::Tensor subsequent_mask(int64_t size, torch::Device device) {
  auto options = torch::TensorOptions().dtype(torch::kBool).device(device);
  return torch::ones({size, size}, options).tril().view({1, 1, size, size});  // [1, 1, T, T]
}

torch::Tensor make_tgt_mask(const torch::Tensor& tgt, int64_t pad) {
  // [B, 1, 1, T] & [1, 1, T, T] -> [B, 1, T, T]
  return make_src_mask(tgt, pad) & subsequent_mask(tgt.size(1), tgt.device());
}

AttentionMask::AttentionMask(torch::Tensor keep) : keep_(std::move(keep)) {}

AttentionMask AttentionMask::causal() {
  AttentionMask mask;
  mask.causal_ = true;
  return mask;
}

torch::Tensor AttentionMask::keep_all(const torch::Tensor& scores) const {
  if (!causal_) return keep_;
  const int64_t q_len = scores.size(-2), k_len = scores.size(-1);
  TORCH_CHECK(q_len == k_len, "a causal mask needs as many queries as keys (", q_len, " vs ", k_len,
              ")");
  torch::Tensor& all = derived_->keep_all;
  if (!all.defined() || all.size(-1) != k_len || all.device() != scores.device())
    all = subsequent_mask(k_len, scores.device());  // [1, 1, T, T]
  return all;
}

torch::Tensor AttentionMask::bias(torch::ScalarType dtype) const {
  if (!keep_.defined()) return {};
  torch::Tensor& bias = derived_->bias;
  if (!bias.defined() || bias.scalar_type() != dtype) {
    // [..., Tk] in rows of a multiple of 8 elements: ATen's memory-efficient
    // kernel needs every stride but the last aligned to 8, else it pads a copy.
    const int64_t k_len = keep_.size(-1), row = (k_len + 7) / 8 * 8;
    auto shape = keep_.sizes().vec();
    shape.back() = row;
    bias =
        torch::full(shape, lowest_finite(dtype), keep_.options().dtype(dtype)).narrow(-1, 0, k_len);
    bias.masked_fill_(keep_, 0.0);
  }
  return bias;
}

AttentionMask source_mask(const torch::Tensor& src, int64_t pad, bool padded) {
  return padded ? AttentionMask(make_src_mask(src, pad)) : AttentionMask();
}

AttentionMask target_mask() { return AttentionMask::causal(); }

double lowest_finite(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kHalf: return std::numeric_limits<c10::Half>::lowest();
    case torch::kBFloat16: return std::numeric_limits<c10::BFloat16>::lowest();
    case torch::kDouble: return std::numeric_limits<double>::lowest();
    default: return std::numeric_limits<float>::lowest();
  }
}

}  // namespace model
