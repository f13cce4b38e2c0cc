// Attention masks: bool tensors, true = may attend. They keep a size-1 head
// dimension and broadcast against the scores [B, h, T_q, T_k].
#pragma once
#include <torch/torch.h>

namespace model {

// Hide source padding: [B, S] -> [B, 1, 1, S].
torch::Tensor make_src_mask(const torch::Tensor& src, int64_t pad);

// Position i may attend to positions j <= i: lower triangular [1, 1, T, T].
torch::Tensor subsequent_mask(int64_t size, torch::Device device = torch::kCPU);

// Target padding and the future together: [B, T] -> [B, 1, T, T].
torch::Tensor make_tgt_mask(const torch::Tensor& tgt, int64_t pad);

}  // namespace model
