#include "trainer/task/objective.h"

#include "trainer/model/masks.h"

namespace task {
namespace {

class Seq2SeqObjective : public Objective {
 public:
  Seq2SeqObjective(model::EncoderDecoder model, const data::Manifest& manifest, double smoothing)
      : model_(std::move(model)),
        smoothing_(manifest.tgt_vocab_size, manifest.special.pad, smoothing) {}

  LossSums loss(const data::Batch& batch) override {
    const int64_t pad = model_->config().pad_id;
    // Once per micro-batch, for every layer: source padding where a row has
    // some; the target's causal mask alone (rows are right-padded: masks.h).
    const bool src_padded = batch.num_src_tokens < batch.src.numel();
    const auto src_mask = model::source_mask(batch.src, pad, src_padded);  // [B, 1, 1, S]
    const auto tgt_mask = model::target_mask();                            // causal
    const auto logits = model_->logits(batch.src, batch.tgt_in, src_mask, tgt_mask);  // [B, T, V]
    return smoothing_(logits, batch.tgt_out);  // log-softmax fused into the loss
  }

 private:
  model::EncoderDecoder model_;
  LabelSmoothingLoss smoothing_;
};

class ClassificationObjective : public Objective {
 public:
  ClassificationObjective(model::TransformerClassifier model, double smoothing)
      : model_(std::move(model)), smoothing_(smoothing) {}

  LossSums loss(const data::Batch& batch) override {
    namespace F = torch::nn::functional;
    const auto logits = model_->forward(batch.src).to(torch::kFloat);  // [B, K]
    LossSums sums;
    sums.smoothed = F::cross_entropy(
        logits, batch.labels,
        F::CrossEntropyFuncOptions().label_smoothing(smoothing_).reduction(torch::kSum));
    sums.nll =
        F::cross_entropy(logits, batch.labels, F::CrossEntropyFuncOptions().reduction(torch::kSum))
            .detach();
    sums.tokens = torch::scalar_tensor(batch.labels.size(0), batch.labels.options());
    return sums;
  }

 private:
  model::TransformerClassifier model_;
  double smoothing_;
};

}  // namespace

std::unique_ptr<Objective> make_objective(const TaskModel& model, const data::Manifest& manifest,
                                          double label_smoothing) {
  if (model.encoder_decoder)
    return std::make_unique<Seq2SeqObjective>(model.encoder_decoder, manifest, label_smoothing);
  return std::make_unique<ClassificationObjective>(model.classifier, label_smoothing);
}

}  // namespace task
