// prepare_data: build a dataset directory from text or a synthetic task.
//
//   prepare_data --task copy --out data/copy --seed 1 --train-size 20000
//                --valid-size 500 --test-size 500 --min-len 4 --max-len 12 --symbols 20
//   prepare_data --task majority --out data/majority --symbols 10 --classes 4 ...
//   prepare_data --task text --out data/de-en --vocab word [--joint-vocab]
//                --train-src train.de --train-tgt train.en --valid-src valid.de ...
//   prepare_data --task text --out data/de-en --vocab spm --joint-vocab --spm-vocab-size 32000
//                [--spm-model-type unigram] [--spm-model given.model] --train-src ...
//   prepare_data --task text --out data/couplet --vocab char --joint-vocab --strip-spaces
//                --train-src train.up --train-tgt train.down ...
//   prepare_data --task classify --out data/news --vocab word
//                --train-tsv train.tsv [--valid-tsv valid.tsv] [--test-tsv test.tsv]
//
// What it writes is described in data_pipeline/prepare/prepare.h. Errors are printed
// with the file or option at fault and give exit status 1; a bad command line, 2.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "data_pipeline/prepare/prepare.h"
#include "launch/logging.h"
#include "launch/process.h"

namespace {

// The first option of `group` given on the command line, or "" if none.
std::string first_given(const CLI::App& group) {
  for (const auto* option : group.get_options()) {
    if (option->count() > 0) return option->get_name();
  }
  return "";
}

std::string command_line(int argc, char** argv) {
  std::string command = "prepare_data";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  return command;
}

// An option group and the tasks its options apply to.
struct TaskGroup {
  const CLI::App* options;
  std::vector<std::string> tasks;
};

// Throws naming the first option given that does not apply to `task`.
void check_misplaced(const std::vector<TaskGroup>& groups, const std::string& task) {
  for (const auto& group : groups) {
    if (std::find(group.tasks.begin(), group.tasks.end(), task) != group.tasks.end()) continue;
    const std::string misplaced = first_given(*group.options);
    if (!misplaced.empty())
      throw std::invalid_argument(misplaced + " does not apply to --task " + task);
  }
}

void print_summary(const data::PrepareOptions& options, const data::Manifest& manifest) {
  logging::info("dataset {}: {} tokenizer, vocabulary {} (src) / {} (tgt)", options.out.string(),
                manifest.tokenizer_kind, manifest.src_vocab_size, manifest.tgt_vocab_size);
  if (manifest.is_classification())
    logging::info("  {} labels in {}", manifest.num_labels, manifest.labels_file);
  for (const auto& split : data::kSplits) {
    const auto found = manifest.splits.find(split);
    if (found == manifest.splits.end()) continue;
    const auto& entry = found->second;
    logging::info("  {:5}: {} examples, {} src tokens, {} tgt tokens, {} shard(s)", split,
                  entry.num_examples(), entry.src_tokens(), entry.tgt_tokens(),
                  entry.shards.size());
  }
  logging::info("  shards in format_version {}: a Fletcher-32 checksum on every chunk",
                data::kShardFormatVersion);
}

}  // namespace

int main(int argc, char** argv) {
  launch::Process& process =
      launch::Process::init(argc, argv);  // mpirun -np N: N ranks share the work
  logging::setup(process.info());
  data::PrepareOptions options;
  CLI::App app{
      "Build a dataset directory (manifest.json, vocabulary, HDF5 shards) from "
      "parallel text files, label<TAB>text files or a synthetic task."};
  app.add_option("--task", options.task,
                 "copy, reverse (synthetic seq2seq), majority (synthetic classification), "
                 "text (parallel files) or classify (label<TAB>text files)")
      ->required()
      ->check(CLI::IsMember({"copy", "reverse", "majority", "text", "classify"}));
  app.add_option("--out", options.out, "dataset directory to create")->required();
  app.add_flag("--force", options.force, "replace an existing non-empty output directory");
  app.add_option("--shard-size", options.shard_size, "examples per shard")->capture_default_str();
  int64_t shard_mb = 0;
  app.add_option("--shard-mb", shard_mb, "also close a shard at about this size (MiB; 0 = off)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--deflate", options.shard.deflate, "gzip level of token arrays, 0 = off")
      ->check(CLI::Range(0, 9))
      ->capture_default_str();

  auto* synthetic = app.add_option_group("synthetic", "--task copy|reverse|majority");
  synthetic->add_option("--seed", options.seed, "random seed")->capture_default_str();
  for (const auto& split : data::kSplits) {
    synthetic
        ->add_option("--" + split + "-size", options.sizes[split], split + " examples (0 = none)")
        ->capture_default_str();
  }
  synthetic->add_option("--min-len", options.synthetic.min_len, "shortest sequence")
      ->capture_default_str();
  synthetic->add_option("--max-len", options.synthetic.max_len, "longest sequence")
      ->capture_default_str();
  synthetic->add_option("--symbols", options.synthetic.symbols, "distinct symbols s0..sN-1")
      ->capture_default_str();
  auto* majority = app.add_option_group("majority", "--task majority");
  majority
      ->add_option("--classes", options.synthetic.classes,
                   "class symbols s0..sK-1; the label is the one occurring most often")
      ->capture_default_str();

  auto* parallel = app.add_option_group("parallel text", "--task text");
  std::map<std::string, data::TextFiles> files;
  for (const auto& split : data::kSplits) {
    parallel->add_option("--" + split + "-src", files[split].src,
                         split + " source text, one sentence a line");
    parallel->add_option("--" + split + "-tgt", files[split].tgt,
                         split + " target text, line-aligned");
  }
  parallel->add_flag("--joint-vocab", options.joint_vocab, "one vocabulary for source and target");
  auto* labeled = app.add_option_group("labeled text", "--task classify");
  std::map<std::string, std::filesystem::path> tsv_files;
  for (const auto& split : data::kSplits) {
    labeled->add_option("--" + split + "-tsv", tsv_files[split],
                        split + " examples, label<TAB>text a line");
  }

  auto* text = app.add_option_group("text", "--task text|classify");
  text->add_option("--vocab", options.tokenizer,
                   "tokenizer kind: word, char or spm (SentencePiece)")
      ->check(CLI::IsMember(data::tokenizer_kinds()))
      ->capture_default_str();
  text->add_flag("--strip-spaces", options.strip_spaces,
                 "remove spaces and tabs from every sentence (char or spm; for text written with "
                 "spaces between its characters, as the public couplet corpora are)");
  text->add_option("--min-count", options.vocab.min_count, "drop rarer tokens (they become <unk>)")
      ->capture_default_str();
  text->add_option("--max-vocab", options.vocab.max_size,
                   "vocabulary size limit incl. specials, 0 = none")
      ->capture_default_str();
  text->add_option("--clean-min-words", options.cleaning.min_words,
                   "drop training pairs with a side shorter than this (words)")
      ->capture_default_str();
  text->add_option("--clean-max-words", options.cleaning.max_words,
                   "drop training pairs with a side longer than this (words; 0 = no limit)")
      ->capture_default_str();
  text->add_option(
          "--clean-ratio", options.cleaning.max_ratio,
          "drop training pairs whose word counts differ by more than this factor (0 = off)")
      ->capture_default_str();
  text->add_option("--clean-max-bytes", options.cleaning.max_bytes,
                   "drop training pairs with a side longer than this (bytes; 0 = no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  text->add_option("--clean-max-tokens", options.cleaning.max_tokens,
                   "drop training pairs with a side of more tokens than this once encoded "
                   "(0 = no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  text->add_option("--spm-model-type", options.spm.model_type, "spm: bpe or unigram")
      ->check(CLI::IsMember({"bpe", "unigram"}))
      ->capture_default_str();
  text->add_option("--spm-vocab-size", options.spm.vocab_size, "spm: pieces (an upper bound)")
      ->capture_default_str();
  text->add_option("--spm-character-coverage", options.spm.character_coverage,
                   "spm: share of characters covered (1.0; 0.9995 for CJK)")
      ->capture_default_str();
  text->add_option("--tokenizer-sample", options.tokenizer_sample,
                   "train the tokenizer on at most this many training pairs (a uniform sample)")
      ->capture_default_str();
  text->add_option("--spm-model", options.spm_model, "spm: use this .model instead of training one")
      ->check(CLI::ExistingFile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (process.is_main()) app.exit(e);     // prints the help, or the error
    return e.get_exit_code() == 0 ? 0 : 2;  // CLI11's own codes (105, 109, ...): bad usage, 2
  }
  options.command = command_line(argc, argv);
  options.shard_bytes = shard_mb << 20;

  try {  // the command line's own consistency: a usage error, 2
    check_misplaced({{synthetic, {"copy", "reverse", "majority"}},
                     {majority, {"majority"}},
                     {parallel, {"text"}},
                     {labeled, {"classify"}},
                     {text, {"text", "classify"}}},
                    options.task);
    for (const auto& [split, file] : tsv_files) {
      if (!file.empty()) options.tsv[split] = file;
    }
    for (const auto& [split, pair] : files) {
      if (pair.src.empty() != pair.tgt.empty()) {
        throw std::invalid_argument("--" + split + "-src and --" + split + "-tgt go together");
      }
      if (!pair.src.empty()) options.text[split] = pair;
    }
    data::check_options(options);
  } catch (const std::exception& e) {
    logging::error("prepare_data: {}", e.what());
    return 2;
  }
  try {
    const data::Manifest manifest = data::prepare_dataset(options);
    if (process.is_main()) print_summary(options, manifest);
  } catch (const std::exception& e) {
    logging::error("prepare_data: {}", e.what());
    return 1;
  }
  return 0;
}
