// prepare_data's settings: every field of PrepareOptions as a key of a
// settings::Schema, read like the trainer's (defaults < `--config prep.toml`
// < the command line) and documented by the same generator
// (docs/prepare_data.md, `prepare_data --config-reference`).
//
//   [dataset]    task, out, force, shard_size, shard_mb, deflate     every task
//   [synthetic]  seed, train_size, ..., symbols                      copy, reverse, majority
//   [majority]   classes                                             majority
//   [text]       train_src, train_tgt, ..., joint_vocab              text
//   [classify]   train_tsv, valid_tsv, test_tsv                      classify
//   [tokenizer]  vocab, strip_spaces, ..., spm_model                 text, classify
//   [cleaning]   min_words, max_words, max_ratio, ...                text, classify
//
// Each key keeps its short command-line name (--task, --train-src, ...); a
// key of a section the task does not read is refused, naming how it was given.
#pragma once
#include <string>

#include "data_pipeline/prepare/prepare.h"
#include "settings/schema.h"

namespace CLI {
class App;
}

namespace data {

class PrepareSettings {
 public:
  // Adds --config and every key to `app`.
  explicit PrepareSettings(CLI::App& app);
  PrepareSettings(const PrepareSettings&) = delete;  // the schema points into this object's options
  PrepareSettings& operator=(const PrepareSettings&) = delete;

  // After app.parse(): the file, then the command line; throws
  // std::invalid_argument naming the key (a usage error).
  const PrepareOptions& resolve();

  // docs/prepare_data.md: a table per section.
  std::string reference() const;

 private:
  PrepareOptions options_;   // the fields the schema binds
  PrepareOptions resolved_;  // options_ with the splits given no file left out
  settings::Schema schema_;
};

}  // namespace data
