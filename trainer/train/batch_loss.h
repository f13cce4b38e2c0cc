// One teacher-forced forward pass of a batch and its loss sums:
//   log p = model(src, tgt_in);  loss = LabelSmoothing(log p, tgt_out)
// Sums, not means: the caller divides once by the global batch's token count.
#pragma once
#include "data_pipeline/loader/collate.h"
#include "trainer/model/transformer.h"
#include "trainer/train/label_smoothing.h"

namespace train {

LossSums batch_loss(model::EncoderDecoder& model, const LabelSmoothingLoss& loss,
                    const data::Batch& batch);

}  // namespace train
