// A training run's model, ready for inference: the run's saved config, the
// dataset's manifest and target tokenizer, weights from one checkpoint or the
// mean of several (checkpoint_average.h), in eval mode.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data_pipeline/manifest.h"
#include "data_pipeline/tokenizer.h"
#include "trainer/config/run_config.h"
#include "trainer/model/transformer.h"

namespace eval {

struct EvalModel {
  config::RunConfig cfg;
  std::string data_dir;
  data::Manifest manifest;
  std::unique_ptr<data::Tokenizer> tgt_tokenizer;
  model::EncoderDecoder model{nullptr};
  std::vector<std::string> checkpoints;  // the weights' sources, oldest first
  int64_t step = 0;                      // training step of the newest
};

// data_dir empty: the run's data.dir. A checkpoint whose tensors do not fit
// the dataset's vocabulary is an error naming the tensor, the file and the dataset.
EvalModel load_eval_model(const std::string& run_dir, const std::string& data_dir,
                          const std::vector<std::string>& checkpoints);

}  // namespace eval
