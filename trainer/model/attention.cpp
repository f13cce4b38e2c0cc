#include "trainer/model/attention.h"

#include <torch/version.h>

#include <cmath>

// Projections call ATen's torch::linear, which folds [B, T, D] into one GEMM
// with the bias added inside it (addmm); the C++ frontend's Linear::forward
// does matmul and then a separate pass for `+= bias`.

namespace model {

namespace {

// d_k = d_v = d_model / h
int64_t head_size(int64_t d_model, int64_t heads) {
  TORCH_CHECK(heads > 0 && d_model % heads == 0, "d_model (", d_model,
              ") must be divisible by heads (", heads, ")");
  return d_model / heads;
}

// Whether Q K^T and P V of a single query (incremental decoding, Tq = 1) are
// better computed as broadcast products summed than by matmul. On the CPU
// LibTorch 1.x splits a batched matmul into one GEMM call per (row, head),
// B·h calls of a 1 × d_k by d_k × Tk product, whose dispatch outweighs the
// product (docs/performance.md, "Why the code is as it is"). LibTorch 2.x
// with MKL (the PyPI build this project uses) hands the batch to one batched
// GEMM call, and a GPU runs it as one kernel: there, matmul.
bool single_query_by_broadcast(const torch::Tensor& q) {
#if TORCH_VERSION_MAJOR < 2
  return q.size(2) == 1 && q.is_cpu();
#else
  (void)q;
  return false;
#endif
}

}  // namespace

MultiHeadedAttentionImpl::MultiHeadedAttentionImpl(int64_t d_model, int64_t heads, double dropout,
                                                   AttentionKernel kernel)
    : d_model_(d_model),
      heads_(heads),
      d_k_(head_size(d_model, heads)),
      kernel_(kernel),
      in_proj_weight_(register_parameter("in_proj_weight", torch::empty({3 * d_model, d_model}))),
      in_proj_bias_(register_parameter("in_proj_bias", torch::zeros({3 * d_model}))),
      out_proj_(register_module("out_proj", torch::nn::Linear(d_model, d_model))),
      dropout_(register_module("dropout", Dropout(dropout))) {
  // On its own the module starts as LibTorch's multi-head attention does, W^Q, W^K, W^V
  // Xavier-uniform. In a model xavier_init draws them again, but these draws
  // stay: they are part of the random stream the model's initial weights come from.
  torch::nn::init::xavier_uniform_(in_proj_weight_);
}

std::vector<torch::Tensor> MultiHeadedAttentionImpl::split_heads(const torch::Tensor& projected,
                                                                 int64_t n) const {
  const int64_t batch = projected.size(0), length = projected.size(1);
  // [B, T, n*D] -> [B, T, n, h, d_k] -> [n, B, h, T, d_k]
  return projected.view({batch, length, n, heads_, d_k_}).permute({2, 0, 3, 1, 4}).unbind(0);
}

torch::Tensor MultiHeadedAttentionImpl::forward_self(const torch::Tensor& x,
                                                     const AttentionMask& mask) {
  auto qkv = queries_keys_values(x);
  return attend(qkv[0], qkv[1], qkv[2], mask);
}

torch::Tensor MultiHeadedAttentionImpl::forward_cross(const torch::Tensor& x,
                                                      const torch::Tensor& memory,
                                                      const AttentionMask& mask) {
  const auto [keys, values] = keys_values(memory);
  return attend(queries(x), keys, values, mask);
}

std::vector<torch::Tensor> MultiHeadedAttentionImpl::queries_keys_values(const torch::Tensor& x) {
  // [Q K V] = x [W^Q; W^K; W^V]^T + b: one GEMM   // [B, T, 3D]
  return split_heads(torch::linear(x, in_proj_weight_, in_proj_bias_), 3);
}

torch::Tensor MultiHeadedAttentionImpl::queries(const torch::Tensor& x) {
  // Q = x W^Q^T + b_Q: the first D rows            // [B, Tq, D]
  auto q =
      torch::linear(x, in_proj_weight_.slice(0, 0, d_model_), in_proj_bias_.slice(0, 0, d_model_));
  return split_heads(q, 1)[0];
}

std::pair<torch::Tensor, torch::Tensor> MultiHeadedAttentionImpl::keys_values(
    const torch::Tensor& memory) {
  // [K V] = memory [W^K; W^V]^T + b: the last 2D rows, one GEMM   // [B, Tk, 2D]
  auto kv =
      torch::linear(memory, in_proj_weight_.slice(0, d_model_), in_proj_bias_.slice(0, d_model_));
  auto k_v = split_heads(kv, 2);
  return {k_v[0], k_v[1]};
}

torch::Tensor MultiHeadedAttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k,
                                               const torch::Tensor& v, const AttentionMask& mask) {
  const bool fused = kernel_ == AttentionKernel::kFused ||
                     (kernel_ == AttentionKernel::kFusedOnGpu && q.is_cuda());
  auto heads = fused ? fused_attention(q, k, v, mask) : explicit_attention(q, k, v, mask);
  // Concat(head_1, ..., head_h)                    // [B, Tq, h, d_k] -> [B, Tq, D]
  auto concat = heads.transpose(1, 2).reshape({q.size(0), q.size(2), d_model_});
  return torch::linear(concat, out_proj_->weight, out_proj_->bias);  // W^O   [B, Tq, D]
}

torch::Tensor MultiHeadedAttentionImpl::explicit_attention(const torch::Tensor& q,
                                                           const torch::Tensor& k,
                                                           const torch::Tensor& v,
                                                           const AttentionMask& mask) {
  const bool broadcast = single_query_by_broadcast(q);
  const auto scaled = q / std::sqrt(static_cast<double>(d_k_));
  // Q K^T / sqrt(d_k), computed as (Q / sqrt(d_k)) K^T   // [B, h, Tq, Tk]
  auto scores = broadcast ? (scaled * k).sum(-1).unsqueeze(2)  // [B, h, Tk, d_k] summed
                          : torch::matmul(scaled, k.transpose(-2, -1));
  if (!mask.empty())
    scores = scores.masked_fill(mask.keep_all(scores).logical_not(),
                                lowest_finite(scores.scalar_type()));
  auto p_attn = dropout_(torch::softmax(scores, -1));  // [B, h, Tq, Tk]
  if (broadcast) return (p_attn.transpose(-2, -1) * v).sum(2, true);  // [B, h, Tk, d_k] summed
  return torch::matmul(p_attn, v);                                    // [B, h, Tq, d_k]
}

torch::Tensor MultiHeadedAttentionImpl::fused_attention(const torch::Tensor& q,
                                                        const torch::Tensor& k,
                                                        const torch::Tensor& v,
                                                        const AttentionMask& mask) {
#if TORCH_VERSION_MAJOR >= 2
  // Causal: the is_causal flag, no mask tensor (FlashAttention takes it);
  // padding: the mask's additive bias, made once per batch (masks.h); else
  // none. "None" is nullopt: an undefined tensor inside the optional would
  // be read as a mask by SDPA's input checks (attention.cpp, validate_sdpa_input).
  const torch::Tensor bias = mask.bias(q.scalar_type());
  const c10::optional<torch::Tensor> attn_mask =
      bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt;
  TORCH_CHECK(!mask.is_causal() || q.size(2) == k.size(2),
              "a causal mask needs as many queries as keys (", q.size(2), " vs ", k.size(2), ")");
  const double p = is_training() ? dropout_->p() : 0.0;
  return at::scaled_dot_product_attention(q, k, v, attn_mask, p,
                                          mask.is_causal());  // [B, h, Tq, d_k]
#else
  TORCH_CHECK(false, "fused attention needs LibTorch >= 2.0 (this is ", TORCH_VERSION, ")");
#endif
}

}  // namespace model
