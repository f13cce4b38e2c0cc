#include "data_pipeline/prepare/prepare_settings.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

namespace data {

namespace {

// The sections a task reads besides [dataset].
std::vector<std::string> sections_of(Task task) {
  switch (task) {
    case Task::kCopy:
    case Task::kReverse: return {"synthetic"};
    case Task::kMajority: return {"synthetic", "majority"};
    case Task::kText: return {"text", "tokenizer", "cleaning"};
    case Task::kClassify: return {"classify", "tokenizer", "cleaning"};
  }
  throw std::logic_error("a task without sections");
}

void bind(settings::Schema& schema, PrepareOptions& o) {
  settings::Section dataset(schema, "dataset");
  dataset("task", "task", &o.task,
          "copy, reverse (synthetic seq2seq), majority (synthetic classification), text "
          "(parallel files) or classify (label<TAB>text files)",
          kTaskNames);
  dataset("out", "out", &o.out, "dataset directory to create");
  dataset("force", "force", &o.force, "replace an existing non-empty output directory");
  dataset("shard_size", "shard-size", &o.shard_size, "examples per shard");
  dataset("shard_mb", "shard-mb", &o.shard_mb,
          "also close a shard at about this size (MiB; 0 = off)");
  dataset("deflate", "deflate", &o.shard.deflate, "gzip level of token arrays, 0 = off .. 9");
  schema.require("dataset.task");
  schema.require("dataset.out");

  settings::Section synthetic(schema, "synthetic");
  synthetic("seed", "seed", &o.seed, "random seed");
  for (const auto& split : kSplits)
    synthetic(split + "_size", split + "-size", &o.sizes[split], split + " examples (0 = none)");
  synthetic("min_len", "min-len", &o.synthetic.min_len, "shortest sequence");
  synthetic("max_len", "max-len", &o.synthetic.max_len, "longest sequence");
  synthetic("symbols", "symbols", &o.synthetic.symbols, "distinct symbols s0..sN-1");
  settings::Section majority(schema, "majority");
  majority("classes", "classes", &o.synthetic.classes,
           "class symbols s0..sK-1; the label is the one occurring most often");

  settings::Section text(schema, "text");
  for (const auto& split : kSplits) {
    text(split + "_src", split + "-src", &o.text[split].src,
         split + " source text, one sentence a line");
    text(split + "_tgt", split + "-tgt", &o.text[split].tgt, split + " target text, line-aligned");
  }
  text("joint_vocab", "joint-vocab", &o.joint_vocab, "one vocabulary for source and target");
  settings::Section classify(schema, "classify");
  for (const auto& split : kSplits)
    classify(split + "_tsv", split + "-tsv", &o.tsv[split],
             split + " examples, label<TAB>text a line");

  settings::Section tokenizer(schema, "tokenizer");
  tokenizer("kind", "vocab", &o.tokenizer, "tokenizer: word, char or spm (SentencePiece)",
            kTokenizerKindNames);
  tokenizer("strip_spaces", "strip-spaces", &o.strip_spaces,
            "remove spaces and tabs from every sentence (char or spm; for text written with "
            "spaces between its characters, as the public couplet corpora are)");
  tokenizer("min_count", "min-count", &o.vocab.min_count, "drop rarer tokens (they become <unk>)");
  tokenizer("max_vocab", "max-vocab", &o.vocab.max_size,
            "vocabulary size limit incl. specials, 0 = none");
  tokenizer("sample", "tokenizer-sample", &o.tokenizer_sample,
            "train the tokenizer on at most this many training pairs (a uniform sample)");
  tokenizer("spm_model_type", "spm-model-type", &o.spm.model_type, "spm: bpe or unigram",
            kSpmModelTypeNames);
  tokenizer("spm_vocab_size", "spm-vocab-size", &o.spm.vocab_size, "spm: pieces (an upper bound)");
  tokenizer("spm_character_coverage", "spm-character-coverage", &o.spm.character_coverage,
            "spm: share of characters covered (1.0; 0.9995 for CJK)");
  tokenizer("spm_model", "spm-model", &o.spm_model, "spm: use this .model instead of training one");

  settings::Section cleaning(schema, "cleaning");
  cleaning("min_words", "clean-min-words", &o.cleaning.min_words,
           "drop training pairs with a side shorter than this (words)");
  cleaning("max_words", "clean-max-words", &o.cleaning.max_words,
           "drop training pairs with a side longer than this (words; 0 = no limit)");
  cleaning("max_ratio", "clean-ratio", &o.cleaning.max_ratio,
           "drop training pairs whose word counts differ by more than this factor (0 = off)");
  cleaning("max_bytes", "clean-max-bytes", &o.cleaning.max_bytes,
           "drop training pairs with a side longer than this (bytes; 0 = no limit)");
  cleaning("max_tokens", "clean-max-tokens", &o.cleaning.max_tokens,
           "drop training pairs with a side of more tokens than this once encoded (0 = no limit)");
}

// Splits given no file are left out; a parallel split needs both sides.
void drop_splits_without_files(PrepareOptions& options) {
  for (const auto& split : kSplits) {
    const TextFiles& pair = options.text[split];
    if (pair.src.empty() != pair.tgt.empty())
      throw std::invalid_argument("--" + split + "-src and --" + split + "-tgt go together");
    if (pair.src.empty()) options.text.erase(split);
    if (options.tsv[split].empty()) options.tsv.erase(split);
  }
}

}  // namespace

PrepareSettings::PrepareSettings(CLI::App& app) {
  bind(schema_, options_);
  schema_.add_config_file_and_cli(app, "TOML settings file (a [section] per table below)");
}

const PrepareOptions& PrepareSettings::resolve() {
  schema_.read_settings();
  const std::string task = settings::name_of(kTaskNames, options_.task);
  const auto read = sections_of(options_.task);
  for (const std::string section :
       {"synthetic", "majority", "text", "classify", "tokenizer", "cleaning"}) {
    const std::string given = schema_.first_given(section);
    if (!given.empty() && std::find(read.begin(), read.end(), section) == read.end())
      throw std::invalid_argument(given + " does not apply to --task " + task);
  }
  resolved_ = options_;  // the schema keeps pointing into options_
  drop_splits_without_files(resolved_);
  check_options(resolved_);
  return resolved_;
}

std::string PrepareSettings::reference() const {
  return "# prepare_data reference\n\n"
         "Generated by `prepare_data --config-reference` from the schema prepare_data reads its "
         "settings with (a test fails when this file and the program differ).\n\n"
         "Each key is given on the command line by its short name (`--train-src file`, the "
         "meaning column names it) or as `--section.key value`, or in a TOML file (`--config "
         "prep.toml`, a `[section]` per table, `key = value`); the command line overrides the "
         "file, which overrides the defaults below. `[dataset]` applies to every task, "
         "`[synthetic]` to copy, reverse and majority, `[majority]` to majority, `[text]` to "
         "text, `[classify]` to classify, `[tokenizer]` and `[cleaning]` to text and classify; "
         "a key of a section the task does not read is an error. What prepare_data writes is "
         "described in [data.md](data.md).\n" +
         schema_.to_markdown();
}

}  // namespace data
