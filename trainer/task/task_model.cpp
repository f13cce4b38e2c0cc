#include "trainer/task/task_model.h"

#include <stdexcept>

namespace task {

torch::nn::Module& TaskModel::module() {
  if (encoder_decoder) return *encoder_decoder;
  return *classifier;
}

TaskModel make_task_model(const config::RunConfig& cfg, const data::Manifest& manifest) {
  TaskModel m;
  if (manifest.task == "seq2seq") {
    m.encoder_decoder = model::EncoderDecoder(
        cfg.model_config(manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special.pad));
  } else if (manifest.task == "classification") {
    m.classifier = model::TransformerClassifier(
        cfg.model_config(manifest.src_vocab_size, /*tgt_vocab=*/0, manifest.special.pad),
        manifest.num_labels);
  } else {
    throw std::invalid_argument("dataset task '" + manifest.task +
                                "' is neither seq2seq nor classification");
  }
  return m;
}

}  // namespace task
