// The encoder (paper, section 3.1): a stack of N identical layers, each
// self-attention then a feed-forward network, each inside a residual sublayer.
#pragma once
#include <torch/torch.h>

#include "trainer/model/attention.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/model_config.h"
#include "trainer/model/sublayer.h"

namespace model {

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const ModelConfig& config);

  // x [B, S, d_model], mask bool [B, 1, 1, S] -> [B, S, d_model]
  torch::Tensor forward(const torch::Tensor& x, const AttentionMask& mask);

 private:
  MultiHeadedAttention self_attn_{nullptr};
  PositionwiseFeedForward feed_forward_{nullptr};
  SublayerConnection self_attn_sublayer_{nullptr};
  SublayerConnection feed_forward_sublayer_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const ModelConfig& config);

  // x (embedded source) [B, S, d_model], mask bool [B, 1, 1, S] -> memory [B, S, d_model]
  torch::Tensor forward(torch::Tensor x, const AttentionMask& mask);

 private:
  torch::nn::ModuleList layers_;
  torch::nn::LayerNorm norm_{nullptr};  // pre-norm only: normalises the last layer's output
};
TORCH_MODULE(Encoder);

}  // namespace model
