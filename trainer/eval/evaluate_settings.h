// evaluate's settings: every field of EvaluateOptions as a key of a
// settings::Schema, read like the trainer's and prepare_data's (defaults <
// `--config eval.toml` < the command line) and documented by the same
// generator (docs/evaluate.md, `evaluate --config-reference`).
//
//   [run]      dir, data, checkpoint, average_last, save_weights   which weights
//   [job]      watch, poll_s, translate                            score, watch or translate
//   [score]    split, out, bleu_tokenize, progress_s               scoring a split
//   [decode]   beam, length_penalty, max_extra_len, batch_tokens   every job
//   [runtime]  device, threads, keep_freed_memory                  every job
//
// Each key keeps its short command-line name (--run, --beam, ...). A job
// does one thing: options of another are refused, naming both.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "settings/schema.h"
#include "trainer/checkpoint/checkpoint_choice.h"
#include "trainer/choices/compute.h"
#include "trainer/eval/evaluation.h"

namespace CLI {
class App;
}

namespace eval {

struct EvaluateOptions {
  std::filesystem::path run_dir;            // runs/<name>: config.toml and checkpoints/
  std::filesystem::path data_dir;           // empty: the run's data.dir
  checkpoint::CheckpointChoice checkpoint;  // latest, best or a checkpoint directory
  int64_t average_last = 1;
  std::filesystem::path save_weights;  // also write the (averaged) weights here
  bool watch = false;                  // score every checkpoint as it appears
  double poll_s = 30;                  // --watch: seconds between looks
  std::filesystem::path translate;     // translate this file's lines (- for stdin)
  EvalOptions eval;                    // split, out, decoding, BLEU tokenizer
  choices::Device device = choices::Device::kAuto;
  int64_t threads = 0;            // torch threads per rank; 0 = the rank's share of its cores
  bool keep_freed_memory = true;  // runtime/host_memory.h
};

class EvaluateSettings {
 public:
  // Adds --config and every key to `app`.
  explicit EvaluateSettings(CLI::App& app);
  EvaluateSettings(const EvaluateSettings&) = delete;  // the schema points into this object's options
  EvaluateSettings& operator=(const EvaluateSettings&) = delete;

  // After app.parse(): the file, then the command line; throws
  // std::invalid_argument naming the key (a usage error).
  const EvaluateOptions& resolve();

  // docs/evaluate.md: a table per section.
  std::string reference() const;

 private:
  EvaluateOptions options_;  // the fields the schema binds
  settings::Schema schema_;
};

}  // namespace eval
