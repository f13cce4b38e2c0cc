// Validation during training: loss and perplexity of the valid split, the
// work shared by all ranks (batch i on rank i mod world), sums allreduced,
// so every rank gets the same figures. Dropout off, no gradients.
#pragma once
#include <cstdint>
#include <vector>

#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "trainer/distributed/communicator.h"
#include "trainer/runtime/precision.h"
#include "trainer/task/objective.h"
#include "trainer/train/step_interval.h"

namespace train {

struct ValidationResult {
  double loss = 0;  // label-smoothed, per target token (per example for classification)
  double nll = 0;   // per target token (example); perplexity = exp(nll)
  double tokens = 0;
};

class Validator {
 public:
  // Due every `every` steps (train.valid_every).
  Validator(const data::Dataset& valid, int64_t batch_tokens, int64_t every);
  bool due(int64_t step) const { return every_.due(step); }
  // Collective, in the training's precision. The model is left in training mode.
  ValidationResult run(torch::nn::Module& model, task::Objective& objective,
                       distributed::Communicator& comm, const torch::Device& device,
                       choices::Precision precision) const;

 private:
  const data::Dataset& valid_;
  std::vector<data::GlobalBatch> batches_;
  const StepInterval every_;
};

}  // namespace train
