// The evaluation job: a checkpoint of a run, scored on one split.
//
//   loss / perplexity   teacher-forced, the training loss without dropout
//   greedy decoding     hypotheses in input order -> hypotheses.txt
//   exact match         share of hypotheses equal to their reference
//
// Writes <out_dir>/hypotheses.txt and <out_dir>/results.json.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace eval {

struct EvalOptions {
  std::string run_dir;              // runs/<name> (holds config.toml and checkpoints/)
  std::string split = "test";
  std::string checkpoint = "latest";  // "latest" or a checkpoint directory
  std::string data_dir;             // empty: the run's data.dir
  std::string out_dir;              // empty: <run>/eval/<split>-<checkpoint>
  int64_t batch_tokens = 4096;      // per evaluation batch, padding included
  int64_t max_extra_len = 50;       // decode at most source length + this (paper §6.1)
};

nlohmann::json run_evaluation(const EvalOptions& options);

}  // namespace eval
