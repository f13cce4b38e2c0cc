// What training minimises, and evaluation reports as loss and perplexity, by
// the dataset's task (task_model.h):
//
//   seq2seq         the encoder-decoder; label-smoothed KL per target token
//                   (label_smoothing.h)
//   classification  the encoder classifier; label-smoothed cross-entropy per
//                   example, as torch's cross_entropy with label_smoothing
//                   computes it
//
// Both give loss sums and a count ("tokens": target tokens, or examples), so
// the global batch is normalised the same way (docs/DESIGN.md).
#pragma once
#include <memory>

#include <torch/torch.h>

#include "data_pipeline/loader/collate.h"
#include "data_pipeline/manifest.h"
#include "trainer/task/label_smoothing.h"
#include "trainer/task/task_model.h"

namespace task {

class Objective {
 public:
  virtual ~Objective() = default;
  // Sums over the batch (the caller divides by the global count).
  virtual LossSums loss(const data::Batch& batch) = 0;
};

// The task's loss on `model` (which it shares, not copies); smoothing from optim.label_smoothing.
std::unique_ptr<Objective> make_objective(const TaskModel& model, const data::Manifest& manifest,
                                          double label_smoothing);

}  // namespace task
