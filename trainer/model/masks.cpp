#include "trainer/model/masks.h"

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

}  // namespace model
