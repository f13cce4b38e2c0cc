// The decoder (paper, section 3.1): a stack of N identical layers, each masked
// self-attention, attention over the encoder output ("memory"), then a
// feed-forward network, each inside a residual sublayer.
#pragma once
#include <torch/torch.h>

#include "trainer/model/attention.h"
#include "trainer/model/decoder_cache.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/model_config.h"
#include "trainer/model/sublayer.h"

namespace model {

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelConfig& config);

  // x [B, T, d_model], memory [B, S, d_model],
  // src_mask bool [B, 1, 1, S], tgt_mask bool [B, 1, T, T] -> [B, T, d_model]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const AttentionMask& src_mask, const AttentionMask& tgt_mask);

  // Incremental decoding: the cache of memory [B, S, d_model] (cross keys and values)
  LayerCache start_cache(const torch::Tensor& memory);
  // The newest position x [B, 1, d_model] -> [B, 1, d_model]; extends cache
  torch::Tensor forward_step(const torch::Tensor& x, const AttentionMask& src_mask,
                             LayerCache& cache);

 private:
  MultiHeadedAttention self_attn_{nullptr};
  MultiHeadedAttention src_attn_{nullptr};
  PositionwiseFeedForward feed_forward_{nullptr};
  SublayerConnection self_attn_sublayer_{nullptr};
  SublayerConnection src_attn_sublayer_{nullptr};
  SublayerConnection feed_forward_sublayer_{nullptr};
};
TORCH_MODULE(DecoderLayer);

class DecoderImpl : public torch::nn::Module {
 public:
  explicit DecoderImpl(const ModelConfig& config);

  // x (embedded target) [B, T, d_model], memory [B, S, d_model],
  // src_mask bool [B, 1, 1, S], tgt_mask bool [B, 1, T, T] -> [B, T, d_model]
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& memory, const AttentionMask& src_mask,
                        const AttentionMask& tgt_mask);

  // Incremental decoding (decoder_cache.h): a cache for memory [B, S, d_model],
  // then one position a call: x [B, 1, d_model] (embedded, position-encoded) -> [B, 1, d_model]
  DecoderCache start_cache(const torch::Tensor& memory);
  torch::Tensor forward_step(torch::Tensor x, const AttentionMask& src_mask, DecoderCache& cache);

 private:
  torch::nn::ModuleList layers_;
  torch::nn::LayerNorm norm_{nullptr};  // pre-norm only: normalises the last layer's output
};
TORCH_MODULE(Decoder);

}  // namespace model
