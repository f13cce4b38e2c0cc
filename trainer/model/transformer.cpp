#include "trainer/model/transformer.h"

#include <stdexcept>

#include "trainer/model/initialization.h"

namespace model {

namespace {

const ModelConfig& validated(const ModelConfig& config) {
  validate(config);
  if (config.tgt_vocab == 0)
    throw std::invalid_argument("model config: the encoder-decoder needs tgt_vocab > 0");
  return config;
}

}  // namespace

EncoderDecoderImpl::EncoderDecoderImpl(const ModelConfig& config) : config_(validated(config)) {
  const auto& c = config_;
  src_embed_ = register_module("src_embed", Embeddings(c.src_vocab, c.d_model));
  // A shared table is registered once (as src_embed), so parameters() lists it once.
  tgt_embed_ = c.share_embeddings
                   ? src_embed_
                   : register_module("tgt_embed", Embeddings(c.tgt_vocab, c.d_model));
  position_ =
      register_module("position", PositionalEncoding(c.d_model, c.dropout, c.max_positions));
  encoder_ = register_module("encoder", Encoder(c));
  decoder_ = register_module("decoder", Decoder(c));
  // A tied weight stays registered by the embedding only.
  generator_ = register_module(
      "generator",
      Generator(c.d_model, c.tgt_vocab, c.tie_output ? tgt_embed_->weight() : torch::Tensor()));
  xavier_init(*this);
}

torch::Tensor EncoderDecoderImpl::encode(const torch::Tensor& src, const AttentionMask& src_mask) {
  return encoder_(position_(src_embed_(src)), src_mask);  // [B, S, d_model]
}

torch::Tensor EncoderDecoderImpl::decode(const torch::Tensor& memory, const AttentionMask& src_mask,
                                         const torch::Tensor& tgt_in,
                                         const AttentionMask& tgt_mask) {
  return decoder_(position_(tgt_embed_(tgt_in)), memory, src_mask, tgt_mask);  // [B, T, d_model]
}

DecoderCache EncoderDecoderImpl::start_decoding(const torch::Tensor& memory) {
  return decoder_->start_cache(memory);
}

torch::Tensor EncoderDecoderImpl::decode_step(const torch::Tensor& tokens,
                                              const AttentionMask& src_mask, DecoderCache& cache) {
  return decoder_->forward_step(position_(tgt_embed_(tokens), cache.length), src_mask,
                                cache);  // [B, 1, d_model]
}

torch::Tensor EncoderDecoderImpl::logits(const torch::Tensor& src, const torch::Tensor& tgt_in,
                                         const AttentionMask& src_mask,
                                         const AttentionMask& tgt_mask) {
  return generator_->logits(
      decode(encode(src, src_mask), src_mask, tgt_in, tgt_mask));  // [B, T, tgt_vocab]
}

torch::Tensor EncoderDecoderImpl::forward(const torch::Tensor& src, const torch::Tensor& tgt_in,
                                          const AttentionMask& src_mask,
                                          const AttentionMask& tgt_mask) {
  return generator_(
      decode(encode(src, src_mask), src_mask, tgt_in, tgt_mask));  // [B, T, tgt_vocab]
}

}  // namespace model
