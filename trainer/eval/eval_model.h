// A training run's model, ready for inference: the run's saved config, the
// dataset's manifest and target tokenizer, the task's model (task/task_model.h)
// with weights from one checkpoint or the mean of several (checkpoint_average.h),
// in eval mode, and its loss (task/objective.h) for loss and perplexity.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data_pipeline/labels.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/tokenizer.h"
#include "launch/ranks.h"
#include "trainer/config/run_config.h"
#include "trainer/task/objective.h"
#include "trainer/task/task_model.h"

namespace eval {

struct EvalModel {
  config::RunConfig cfg;
  std::string data_dir;
  data::Manifest manifest;
  std::unique_ptr<data::Tokenizer> tgt_tokenizer;
  data::LabelSet labels;  // classification: the class names
  task::TaskModel model;
  std::unique_ptr<task::Objective> objective;
  std::vector<std::string> checkpoints;  // the weights' sources, oldest first
  int64_t step = 0;                      // training step of the newest
  std::string examples_ledger;           // ... and the examples it was trained on (train_state.h)
  torch::Device device = torch::kCPU;    // where the model computes

  bool classification() const { return manifest.task == "classification"; }
  // The seq2seq model, for decoding; throws for a classification run.
  model::EncoderDecoder& encoder_decoder();
  // Classification: src [B, S] int64 -> the most likely class id of each row.
  std::vector<int64_t> classify(const torch::Tensor& src);
};

// The dataset a run is evaluated on: data_dir, or when empty the run's data.dir.
std::string dataset_dir(const std::string& run_dir, const std::string& data_dir);

// Collective. data_dir empty: the run's data.dir. Rank 0 alone reads the
// checkpoints (a thousand ranks evaluating cost the shared file system one
// reader, as at the trainer's resume); the others receive its weights by
// broadcast. A checkpoint whose tensors do not fit the dataset's vocabulary
// is an error naming the tensor, the file and the dataset, on every rank.
EvalModel load_eval_model(const std::string& run_dir, const std::string& data_dir,
                          const std::vector<std::string>& checkpoints, const launch::Ranks& ranks,
                          const torch::Device& device = torch::kCPU);

}  // namespace eval
