#include "trainer/eval/decoder_state.h"

#include "trainer/model/masks.h"

#include <stdexcept>
#include <string>

namespace eval {

TransformerDecoderState::TransformerDecoderState(model::EncoderDecoder& model,
                                                 const torch::Tensor& src)
    : model_(model) {
  src_keep_ = model::make_src_mask(src, model->config().pad_id);  // [B, 1, 1, S]
  src_mask_ = model::AttentionMask(src_keep_);
  cache_ = model->start_decoding(model->encode(src, src_keep_));  // memory [B, S, D]
}

torch::Tensor TransformerDecoderState::next_logits(const torch::Tensor& prefixes) {
  if (prefixes.size(1) != cache_.length + 1)
    throw std::logic_error("incremental decoding: expected a prefix of " +
                           std::to_string(cache_.length + 1) + " tokens, got " +
                           std::to_string(prefixes.size(1)));
  const auto newest = prefixes.slice(1, -1).to(src_keep_.device());    // [N, 1]
  const auto hidden = model_->decode_step(newest, src_mask_, cache_);  // [N, 1, D]
  return model_->generator()->logits(hidden.select(1, 0));             // [N, V]
}

void TransformerDecoderState::select(const torch::Tensor& sources_anywhere,
                                     const torch::Tensor& rows_anywhere) {
  const auto device = src_keep_.device();
  const auto sources = sources_anywhere.to(device), rows = rows_anywhere.to(device);
  // Ascending and as many as before: every source is kept, nothing to move.
  if (sources.size(0) != src_keep_.size(0)) {
    src_keep_ = src_keep_.index_select(0, sources);
    src_mask_ = model::AttentionMask(src_keep_);
  }
  cache_.select(sources, rows);
}

}  // namespace eval
