// The model a dataset's task needs (manifest "task"), from the run's config:
//
//   seq2seq         the encoder-decoder (transformer.h) over the dataset's
//                   source and target vocabularies
//   classification  the encoder classifier (classifier.h) over the source
//                   vocabulary, one score per label; no target vocabulary
//
// Training wraps it in its loss (train/objective.h); evaluation decodes or
// classifies with it directly.
#pragma once
#include <torch/torch.h>

#include "data_pipeline/manifest.h"
#include "trainer/config/run_config.h"
#include "trainer/model/classifier.h"
#include "trainer/model/transformer.h"

namespace model {

struct TaskModel {
  EncoderDecoder encoder_decoder{nullptr};    // seq2seq, else empty
  TransformerClassifier classifier{nullptr};  // classification, else empty

  torch::nn::Module& module();  // whichever of the two it is
};

// Throws std::invalid_argument for a task that is neither.
TaskModel make_model(const config::RunConfig& cfg, const data::Manifest& manifest);

}  // namespace model
