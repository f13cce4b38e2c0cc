#include "trainer/train/batch_loss.h"

#include "trainer/model/masks.h"

namespace train {

LossSums batch_loss(model::EncoderDecoder& model, const LabelSmoothingLoss& loss,
                    const data::Batch& batch) {
  const int64_t pad = model->config().pad_id;
  const auto src_mask = model::make_src_mask(batch.src, pad);     // [B, 1, 1, S]
  const auto tgt_mask = model::make_tgt_mask(batch.tgt_in, pad);  // [B, 1, T, T]
  const auto log_probs = model->forward(batch.src, batch.tgt_in, src_mask, tgt_mask);  // [B, T, V]
  return loss(log_probs, batch.tgt_out);
}

}  // namespace train
