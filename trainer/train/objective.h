// What training minimises, by the dataset's task (manifest "task"):
//
//   seq2seq         the encoder-decoder (model/transformer.h); label-smoothed
//                   KL per target token (label_smoothing.h)
//   classification  the encoder classifier (model/classifier.h); label-smoothed
//                   cross-entropy per example, as torch's cross_entropy with
//                   label_smoothing computes it
//
// Both give loss sums and a count ("tokens": target tokens, or examples), so
// the global batch is normalised the same way (DESIGN.md).
#pragma once
#include <memory>

#include <torch/torch.h>

#include "data_pipeline/loader/collate.h"
#include "data_pipeline/manifest.h"
#include "trainer/config/run_config.h"
#include "trainer/model/classifier.h"
#include "trainer/model/transformer.h"
#include "trainer/train/label_smoothing.h"

namespace train {

class Objective {
 public:
  virtual ~Objective() = default;
  virtual torch::nn::Module& model() = 0;
  // Sums over the batch (the caller divides by the global count).
  virtual LossSums loss(const data::Batch& batch) = 0;
};

class Seq2SeqObjective : public Objective {
 public:
  Seq2SeqObjective(const config::RunConfig& cfg, const data::Manifest& manifest);
  torch::nn::Module& model() override { return *model_; }
  LossSums loss(const data::Batch& batch) override;
  model::EncoderDecoder& encoder_decoder() { return model_; }

 private:
  model::EncoderDecoder model_;
  LabelSmoothingLoss smoothing_;
};

class ClassificationObjective : public Objective {
 public:
  ClassificationObjective(const config::RunConfig& cfg, const data::Manifest& manifest);
  torch::nn::Module& model() override { return *model_; }
  LossSums loss(const data::Batch& batch) override;
  model::TransformerClassifier& classifier() { return model_; }

 private:
  model::TransformerClassifier model_;
  double smoothing_;
};

std::unique_ptr<Objective> make_objective(const config::RunConfig& cfg, const data::Manifest& manifest);

}  // namespace train
