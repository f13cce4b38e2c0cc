#include "trainer/model/classifier.h"

#include <stdexcept>

#include "trainer/model/initialization.h"
#include "trainer/model/masks.h"

namespace model {

TransformerClassifierImpl::TransformerClassifierImpl(const ModelConfig& config, int64_t num_labels)
    : config_(config) {
  validate(config_);
  if (num_labels < 2)
    throw std::invalid_argument("a classifier needs at least 2 labels, got " +
                                std::to_string(num_labels));
  embed_ = register_module("embed", Embeddings(config_.src_vocab, config_.d_model));
  position_ = register_module(
      "position", PositionalEncoding(config_.d_model, config_.dropout, config_.max_positions));
  encoder_ = register_module("encoder", Encoder(config_));
  head_ = register_module("head", torch::nn::Linear(config_.d_model, num_labels));
  xavier_init(*this);
}

torch::Tensor TransformerClassifierImpl::forward(const torch::Tensor& src) {
  const auto mask = make_src_mask(src, config_.pad_id);                           // [B, 1, 1, S]
  const auto hidden = encoder_(position_(embed_(src)), mask);                     // [B, S, D]
  const auto keep = mask.squeeze(1).squeeze(1).unsqueeze(-1).to(hidden.dtype());  // [B, S, 1]
  const auto pooled = (hidden * keep).sum(1) / keep.sum(1).clamp_min(1);          // [B, D]
  return head_(pooled);                                                           // [B, num_labels]
}

}  // namespace model
