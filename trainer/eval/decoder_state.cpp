#include "trainer/eval/decoder_state.h"

#include "trainer/model/masks.h"

#include <stdexcept>
#include <string>

namespace eval {

TransformerDecoderState::TransformerDecoderState(model::EncoderDecoder& model,
                                                 const torch::Tensor& src, int64_t copies)
    : model_(model) {
  const auto src_keep = model::make_src_mask(src, model->config().pad_id);  // [B, 1, 1, S]
  const auto memory = model->encode(src, src_keep);                         // [B, S, D]
  src_keep_ = src_keep.repeat_interleave(copies, 0);  // [B × copies, 1, 1, S]
  src_mask_ = model::AttentionMask(src_keep_);
  cache_ = model->start_decoding(memory.repeat_interleave(copies, 0));
}

torch::Tensor TransformerDecoderState::next_log_probs(const torch::Tensor& prefixes) {
  if (prefixes.size(1) != cache_.length + 1)
    throw std::logic_error("incremental decoding: expected a prefix of " +
                           std::to_string(cache_.length + 1) + " tokens, got " +
                           std::to_string(prefixes.size(1)));
  const auto newest = prefixes.slice(1, -1).to(src_keep_.device());    // [N, 1]
  const auto hidden = model_->decode_step(newest, src_mask_, cache_);  // [N, 1, D]
  return model_->generator()(hidden.select(1, 0));                     // [N, V]
}

void TransformerDecoderState::select_rows(const torch::Tensor& rows_anywhere) {
  const auto rows = rows_anywhere.to(src_keep_.device());
  src_keep_ = src_keep_.index_select(0, rows);
  src_mask_ = model::AttentionMask(src_keep_);
  cache_.select_rows(rows);
}

}  // namespace eval
