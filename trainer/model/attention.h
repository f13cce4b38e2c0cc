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

namespace model {

class MultiHeadedAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadedAttentionImpl(int64_t d_model, int64_t heads, double dropout);

  // Self-attention: Q, K and V from x with one fused projection.
  // x [B, T, D], mask bool broadcastable to [B, h, T, T] -> [B, T, D]
  torch::Tensor forward_self(const torch::Tensor& x, const torch::Tensor& mask);

  // Encoder-decoder attention: Q from x, K and V from memory (one fused projection).
  // x [B, Tq, D], memory [B, Tk, D], mask broadcastable to [B, h, Tq, Tk] -> [B, Tq, D]
  torch::Tensor forward_cross(const torch::Tensor& x, const torch::Tensor& memory,
                              const torch::Tensor& mask);

  // Incremental decoding (decoder_cache.h).
  // Self-attention of the newest position x [B, 1, D] over itself and the
  // positions before it, whose keys and values [B, h, t, d_k] are extended
  // by its own -> [B, 1, D]
  torch::Tensor forward_self_step(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values);
  // K and V of memory [B, Tk, D] -> two [B, h, Tk, d_k]
  std::pair<torch::Tensor, torch::Tensor> memory_keys_values(const torch::Tensor& memory);
  // Encoder-decoder attention with memory_keys_values() given -> [B, Tq, D]
  torch::Tensor forward_cross_cached(const torch::Tensor& x, const torch::Tensor& keys,
                                     const torch::Tensor& values, const torch::Tensor& mask);

 private:
  // [B, T, n*D] -> n tensors [B, h, T, d_k] (views, no copy)
  std::vector<torch::Tensor> split_heads(const torch::Tensor& projected, int64_t n) const;
  // q [B, h, Tq, d_k], k and v [B, h, Tk, d_k] -> W^O Concat(heads) [B, Tq, D]
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& mask);

  int64_t d_model_;
  int64_t heads_;
  int64_t d_k_;
  torch::Tensor in_proj_weight_;  // [3D, D]
  torch::Tensor in_proj_bias_;    // [3D]
  torch::nn::Linear out_proj_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(MultiHeadedAttention);

}  // namespace model
