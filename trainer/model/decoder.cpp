#include "trainer/model/decoder.h"

namespace model {

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& c)
    : self_attn_(register_module("self_attn",
                                 MultiHeadedAttention(c.d_model, c.heads, c.dropout, c.attention))),
      src_attn_(register_module("src_attn",
                                MultiHeadedAttention(c.d_model, c.heads, c.dropout, c.attention))),
      feed_forward_(
          register_module("feed_forward", PositionwiseFeedForward(c.d_model, c.d_ff, c.dropout))),
      self_attn_sublayer_(register_module("self_attn_sublayer", SublayerConnection(c))),
      src_attn_sublayer_(register_module("src_attn_sublayer", SublayerConnection(c))),
      feed_forward_sublayer_(register_module("feed_forward_sublayer", SublayerConnection(c))) {}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                        const AttentionMask& src_mask,
                                        const AttentionMask& tgt_mask) {
  auto h = self_attn_sublayer_(
      x, [&](const torch::Tensor& y) { return self_attn_->forward_self(y, tgt_mask); });
  h = src_attn_sublayer_(
      h, [&](const torch::Tensor& y) { return src_attn_->forward_cross(y, memory, src_mask); });
  return feed_forward_sublayer_(h, [&](const torch::Tensor& y) { return feed_forward_(y); });
}

LayerCache DecoderLayerImpl::start_cache(const torch::Tensor& memory) {
  return start_layer_cache(*src_attn_, memory);
}

torch::Tensor DecoderLayerImpl::forward_step(const torch::Tensor& x, const AttentionMask& src_mask,
                                             LayerCache& cache) {
  auto h = self_attn_sublayer_(
      x, [&](const torch::Tensor& y) { return self_attention_step(*self_attn_, y, cache); });
  h = src_attn_sublayer_(h, [&](const torch::Tensor& y) {
    return cross_attention_step(*src_attn_, y, cache, src_mask);
  });
  return feed_forward_sublayer_(h, [&](const torch::Tensor& y) { return feed_forward_(y); });
}

DecoderImpl::DecoderImpl(const ModelConfig& c) {
  for (int64_t i = 0; i < c.decoder_layers; ++i) layers_->push_back(DecoderLayer(c));
  register_module("layers", layers_);
  if (auto norm = make_final_norm(c)) norm_ = register_module("norm", norm);
}

torch::Tensor DecoderImpl::forward(torch::Tensor x, const torch::Tensor& memory,
                                   const AttentionMask& src_mask, const AttentionMask& tgt_mask) {
  for (const auto& layer : *layers_)
    x = layer->as<DecoderLayerImpl>()->forward(x, memory, src_mask, tgt_mask);
  return norm_ ? norm_(x) : x;
}

DecoderCache DecoderImpl::start_cache(const torch::Tensor& memory) {
  DecoderCache cache;
  for (const auto& layer : *layers_)
    cache.layers.push_back(layer->as<DecoderLayerImpl>()->start_cache(memory));
  return cache;
}

torch::Tensor DecoderImpl::forward_step(torch::Tensor x, const AttentionMask& src_mask,
                                        DecoderCache& cache) {
  for (size_t i = 0; i < layers_->size(); ++i)
    x = layers_[i]->as<DecoderLayerImpl>()->forward_step(x, src_mask, cache.layers[i]);
  ++cache.length;
  return norm_ ? norm_(x) : x;
}

}  // namespace model
