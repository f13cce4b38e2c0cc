#include "trainer/model/encoder.h"

namespace model {

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& c)
    : self_attn_(register_module("self_attn",
                                 MultiHeadedAttention(c.d_model, c.heads, c.dropout, c.attention))),
      feed_forward_(
          register_module("feed_forward", PositionwiseFeedForward(c.d_model, c.d_ff, c.dropout))),
      self_attn_sublayer_(register_module("self_attn_sublayer", SublayerConnection(c))),
      feed_forward_sublayer_(register_module("feed_forward_sublayer", SublayerConnection(c))) {}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const AttentionMask& mask) {
  auto h = self_attn_sublayer_(
      x, [&](const torch::Tensor& y) { return self_attn_->forward_self(y, mask); });
  return feed_forward_sublayer_(h, [&](const torch::Tensor& y) { return feed_forward_(y); });
}

EncoderImpl::EncoderImpl(const ModelConfig& c) {
  for (int64_t i = 0; i < c.encoder_layers; ++i) layers_->push_back(EncoderLayer(c));
  register_module("layers", layers_);
  if (auto norm = make_final_norm(c)) norm_ = register_module("norm", norm);
}

torch::Tensor EncoderImpl::forward(torch::Tensor x, const AttentionMask& mask) {
  for (const auto& layer : *layers_) x = layer->as<EncoderLayerImpl>()->forward(x, mask);
  return norm_ ? norm_(x) : x;
}

}  // namespace model
