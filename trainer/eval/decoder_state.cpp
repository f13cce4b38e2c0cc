#include "trainer/eval/decoder_state.h"

#include "trainer/model/masks.h"

namespace eval {

TransformerDecoderState::TransformerDecoderState(model::EncoderDecoder& model, const torch::Tensor& src,
                                                 int64_t copies)
    : model_(model) {
  const auto src_mask = model::make_src_mask(src, model->config().pad_id);  // [B, 1, 1, S]
  const auto memory = model->encode(src, src_mask);                         // [B, S, D]
  src_mask_ = src_mask.repeat_interleave(copies, 0);                        // [B × copies, 1, 1, S]
  memory_ = memory.repeat_interleave(copies, 0);                            // [B × copies, S, D]
}

torch::Tensor TransformerDecoderState::next_log_probs(const torch::Tensor& prefixes) {
  const auto tgt_mask = model::make_tgt_mask(prefixes, model_->config().pad_id);  // [N, 1, t, t]
  const auto hidden = model_->decode(memory_, src_mask_, prefixes, tgt_mask);      // [N, t, D]
  return model_->generator()(hidden.select(1, -1));                                // [N, V]
}

void TransformerDecoderState::select_rows(const torch::Tensor& rows) {
  src_mask_ = src_mask_.index_select(0, rows);
  memory_ = memory_.index_select(0, rows);
}

}  // namespace eval
