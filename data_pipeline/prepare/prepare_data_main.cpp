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
//   prepare_data --config prep.toml [--out elsewhere]   the same settings from a file
//   prepare_data --config-reference                      docs/prepare_data.md
//   prepare_data --upgrade data/de-en    a dataset from an earlier prepare_data: adds what
//                                        this build reads (prepare/upgrade.h)
//
// Every setting is a key of data_pipeline/prepare/prepare_settings.h. What it writes
// is described in data_pipeline/prepare/prepare.h. Errors are printed with
// the file or option at fault and give exit status 1; a bad command line or
// settings file, 2.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/prepare/prepare_settings.h"
#include "data_pipeline/prepare/upgrade.h"
#include "base/logging.h"
#include "launch/process.h"

namespace {

std::string command_line(int argc, char** argv) {
  std::string command = "prepare_data";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  return command;
}

void print_summary(const data::PrepareOptions& options, const data::Manifest& manifest) {
  logging::info("dataset {}: {} tokenizer, vocabulary {} (src) / {} (tgt)", options.out.string(),
                settings::name_of(data::kTokenizerKindNames, manifest.tokenizer_kind),
                manifest.src_vocab_size, manifest.tgt_vocab_size);
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
  logging::setup(process.info().rank);
  CLI::App app{
      "Build a dataset directory (manifest.json, vocabulary, HDF5 shards) from "
      "parallel text files, label<TAB>text files or a synthetic task."};
  data::PrepareSettings settings(app);
  bool print_reference = false;
  app.add_flag("--config-reference", print_reference,
               "print every setting as Markdown (docs/prepare_data.md) and exit");
  std::string upgrade;
  app.add_option("--upgrade", upgrade,
                 "bring the dataset DIR prepared by an earlier prepare_data up to what this build "
                 "reads (its split indexes), in place, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (process.is_main()) app.exit(e);     // prints the help, or the error
    return e.get_exit_code() == 0 ? 0 : 2;  // CLI11's own codes (105, 109, ...): bad usage, 2
  }
  if (print_reference) {
    if (process.is_main()) std::cout << settings.reference();
    return 0;
  }
  if (!upgrade.empty()) {
    const auto others = app.get_options(
        [](const CLI::Option* o) { return o->count() > 0 && o->get_name() != "--upgrade"; });
    if (!others.empty()) {
      if (process.is_main())
        logging::error("prepare_data: --upgrade DIR takes no other option ({} given)",
                       others.front()->get_name());
      return 2;
    }
    try {
      if (process.is_main()) {
        std::string indexed;
        for (const auto& split : data::upgrade_dataset(upgrade))
          indexed += (indexed.empty() ? "" : ", ") + split;
        logging::info("dataset {}: {}", upgrade,
                      indexed.empty() ? "already up to date" : "split indexes written: " + indexed);
      }
    } catch (const std::exception& e) {
      logging::error("prepare_data: {}", e.what());
      return 1;
    }
    return 0;
  }
  data::PrepareOptions options;
  try {  // the settings' own consistency: a usage error, 2
    options = settings.resolve();
  } catch (const std::exception& e) {
    logging::error("prepare_data: {}", e.what());
    return 2;
  }
  options.command = command_line(argc, argv);
  try {
    const data::Manifest manifest = data::prepare_dataset(options);
    if (process.is_main()) print_summary(options, manifest);
  } catch (const std::exception& e) {
    logging::error("prepare_data: {}", e.what());
    return 1;
  }
  return 0;
}
