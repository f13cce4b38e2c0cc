// A task: where the model, the dataset and the run's config meet. The model
// (trainer/model/) knows a ModelConfig and tensors only; this composes it
// from the run's config and the dataset's manifest (vocabulary sizes, padding
// id, labels). The model the dataset's task needs (manifest "task"):
//
//   seq2seq         the encoder-decoder (transformer.h) over the dataset's
//                   source and target vocabularies
//   classification  the encoder classifier (classifier.h) over the source
//                   vocabulary, one score per label; no target vocabulary
//
// Training and evaluation's loss wrap it (objective.h); evaluation decodes or
// classifies with it directly.
#pragma once
#include <torch/torch.h>

#include "data_pipeline/manifest.h"
#include "trainer/config/run_config.h"
#include "trainer/model/classifier.h"
#include "trainer/model/transformer.h"

namespace task {

struct TaskModel {
  model::EncoderDecoder encoder_decoder{nullptr};    // seq2seq, else empty
  model::TransformerClassifier classifier{nullptr};  // classification, else empty

  torch::nn::Module& module();  // whichever of the two it is
};

// Throws std::invalid_argument for a task that is neither. `copies`: how
// many float32 copies of the parameters the process will hold in host memory
// (evaluation 1; training on a CPU its gradients and Adam's moments too),
// checked against the host's and the job's memory before the model is built.
TaskModel make_task_model(const config::RunConfig& cfg, const data::Manifest& manifest,
                          int copies = 1);

}  // namespace task
