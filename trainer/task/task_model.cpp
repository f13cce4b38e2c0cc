#include "trainer/task/task_model.h"

#include <stdexcept>
#include <string>

#include "trainer/runtime/host_memory.h"

namespace task {

torch::nn::Module& TaskModel::module() {
  if (encoder_decoder) return *encoder_decoder;
  return *classifier;
}

namespace {

// Before any allocation: a model far beyond the host's memory would be
// granted (overcommit) and the process killed without a word.
void require_room_for(const model::ModelConfig& c, int copies) {
  runtime::require_host_memory(
      4.0 * copies * model::construction_floats(c),
      "the model (model.d_model " + std::to_string(c.d_model) + ", model.d_ff " +
          std::to_string(c.d_ff) + ", " + std::to_string(c.encoder_layers) + " + " +
          std::to_string(c.tgt_vocab == 0 ? 0 : c.decoder_layers) + " layers, vocabularies " +
          std::to_string(c.src_vocab) + " and " + std::to_string(c.tgt_vocab) +
          ", model.max_positions " + std::to_string(c.max_positions) + ") in float32" +
          (copies == 1 ? std::string(", before its gradients and optimizer state,")
                       : " with what training holds beside it (" + std::to_string(copies) +
                             " copies: the weights, their gradients and Adam's moments, before "
                             "activations; a smaller model.d_model, model.d_ff or fewer layers "
                             "need less),"));
}

}  // namespace

TaskModel make_task_model(const config::RunConfig& cfg, const data::Manifest& manifest,
                          int copies) {
  const bool classification = manifest.task == "classification";
  if (!classification && manifest.task != "seq2seq")
    throw std::invalid_argument("dataset task '" + manifest.task +
                                "' is neither seq2seq nor classification");
  const model::ModelConfig config = cfg.model_config(
      manifest.src_vocab_size, classification ? 0 : manifest.tgt_vocab_size, manifest.special.pad);
  model::validate(config);  // its errors first: they name the field
  require_room_for(config, copies);
  TaskModel m;
  if (classification)
    m.classifier = model::TransformerClassifier(config, manifest.num_labels);
  else
    m.encoder_decoder = model::EncoderDecoder(config);
  return m;
}

}  // namespace task
