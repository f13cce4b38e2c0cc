// Multi-head attention (paper, section 3.2):
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
//   MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
//   head_i = Attention(Q W^Q_i, K W^K_i, V W^V_i)
// Parameters are laid out like LibTorch's MultiheadAttention module, so weights copy
// 1:1: in_proj_weight = [W^Q; W^K; W^V] (rows), out_proj = W^O.
#pragma once
#include <torch/torch.h>

#include <utility>
#include <vector>

#include "trainer/model/dropout.h"
#include "trainer/model/masks.h"
#include "trainer/model/model_config.h"

namespace model {

class MultiHeadedAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadedAttentionImpl(int64_t d_model, int64_t heads, double dropout,
                           AttentionKernel kernel = AttentionKernel::kExplicit);

  // Self-attention: Q, K and V from x with one fused projection.
  // x [B, T, D], mask of [B, h, T, T] scores (masks.h) -> [B, T, D]
  torch::Tensor forward_self(const torch::Tensor& x, const AttentionMask& mask);

  // Encoder-decoder attention: Q from x, K and V from memory (one fused projection).
  // x [B, Tq, D], memory [B, Tk, D], mask of [B, h, Tq, Tk] scores -> [B, Tq, D]
  torch::Tensor forward_cross(const torch::Tensor& x, const torch::Tensor& memory,
                              const AttentionMask& mask);

  // The two halves of both, which incremental decoding (decoder_cache.h) also uses:
  // projections into heads, then attention over them.
  // Q, K and V of x [B, T, D] (one GEMM) -> three [B, h, T, d_k]
  std::vector<torch::Tensor> queries_keys_values(const torch::Tensor& x);
  // Q of x [B, Tq, D] -> [B, h, Tq, d_k]
  torch::Tensor queries(const torch::Tensor& x);
  // K and V of memory [B, Tk, D] (one GEMM) -> two [B, h, Tk, d_k]
  std::pair<torch::Tensor, torch::Tensor> keys_values(const torch::Tensor& memory);
  // q [B, h, Tq, d_k], k and v [B, h, Tk, d_k], mask of the [B, h, Tq, Tk]
  // scores (empty: every key visible) -> W^O Concat(heads) [B, Tq, D]
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const AttentionMask& mask);

 private:
  // [B, T, n*D] -> n tensors [B, h, T, d_k] (views, no copy)
  std::vector<torch::Tensor> split_heads(const torch::Tensor& projected, int64_t n) const;
  // softmax(Q K^T / sqrt(d_k)) V with dropout on the probabilities -> [B, h, Tq, d_k]
  torch::Tensor explicit_attention(const torch::Tensor& q, const torch::Tensor& k,
                                   const torch::Tensor& v, const AttentionMask& mask);
  // The same by LibTorch's scaled_dot_product_attention (LibTorch >= 2.0)
  torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const AttentionMask& mask);

  int64_t d_model_;
  int64_t heads_;
  int64_t d_k_;
  AttentionKernel kernel_;
  torch::Tensor in_proj_weight_;  // [3D, D]
  torch::Tensor in_proj_bias_;    // [3D]
  torch::nn::Linear out_proj_{nullptr};
  Dropout dropout_{nullptr};
};
TORCH_MODULE(MultiHeadedAttention);

}  // namespace model
