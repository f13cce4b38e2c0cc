#include "trainer/train/objective.h"

#include <stdexcept>

#include "trainer/model/masks.h"

namespace train {

Seq2SeqObjective::Seq2SeqObjective(const config::RunConfig& cfg, const data::Manifest& manifest)
    : model_(cfg.model_config(manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special.pad)),
      smoothing_(manifest.tgt_vocab_size, manifest.special.pad, cfg.optim.label_smoothing) {}

LossSums Seq2SeqObjective::loss(const data::Batch& batch) {
  const int64_t pad = model_->config().pad_id;
  const auto src_mask = model::make_src_mask(batch.src, pad);     // [B, 1, 1, S]
  const auto tgt_mask = model::make_tgt_mask(batch.tgt_in, pad);  // [B, 1, T, T]
  const auto logits = model_->logits(batch.src, batch.tgt_in, src_mask, tgt_mask);  // [B, T, V]
  return smoothing_(logits, batch.tgt_out);  // log-softmax fused into the loss
}

ClassificationObjective::ClassificationObjective(const config::RunConfig& cfg, const data::Manifest& manifest)
    : model_(cfg.model_config(manifest.src_vocab_size, manifest.src_vocab_size, manifest.special.pad),
             manifest.num_labels),
      smoothing_(cfg.optim.label_smoothing) {}

LossSums ClassificationObjective::loss(const data::Batch& batch) {
  namespace F = torch::nn::functional;
  const auto logits = model_->forward(batch.src).to(torch::kFloat);  // [B, K]
  LossSums sums;
  sums.smoothed = F::cross_entropy(logits, batch.labels,
                                   F::CrossEntropyFuncOptions().label_smoothing(smoothing_).reduction(torch::kSum));
  sums.nll = F::cross_entropy(logits, batch.labels, F::CrossEntropyFuncOptions().reduction(torch::kSum)).detach();
  sums.tokens = batch.labels.size(0);
  return sums;
}

std::unique_ptr<Objective> make_objective(const config::RunConfig& cfg, const data::Manifest& manifest) {
  if (manifest.task == "seq2seq") return std::make_unique<Seq2SeqObjective>(cfg, manifest);
  if (manifest.task == "classification") return std::make_unique<ClassificationObjective>(cfg, manifest);
  throw std::invalid_argument("dataset task '" + manifest.task + "' is neither seq2seq nor classification");
}

}  // namespace train
