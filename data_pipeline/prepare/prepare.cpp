#include "data_pipeline/prepare/prepare.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/labels.h"
#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/labeled_text.h"
#include "data_pipeline/prepare/output_directory.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/prepare/range_writer.h"
#include "data_pipeline/prepare/tokenizers.h"
#include "data_pipeline/random.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/split_index.h"
#include "base/file_write.h"
#include "base/logging.h"
#include "launch/ranks.h"
#include "base/seconds.h"

namespace data {

namespace fs = std::filesystem;
using nlohmann::json;

void check_options(const PrepareOptions& options) {
  if (options.shard_size < 1) throw std::invalid_argument("shard size must be at least 1");
  if (options.shard_mb < 0 || options.shard_mb > (int64_t{1} << 20))
    throw std::invalid_argument("--shard-mb must be in 0..1048576, not " +
                                std::to_string(options.shard_mb));
  if (options.seed < 0) throw std::invalid_argument("--seed must not be negative");
  if (options.tokenizer_sample < 1)
    throw std::invalid_argument("tokenizer sample must be at least 1");
  if (options.shard.deflate < 0 || options.shard.deflate > 9) {
    throw std::invalid_argument("deflate level must be in 0..9");
  }
  if (!is_synthetic_task(options.task)) {
    if (options.task == Task::kText && options.text.count("train") == 0) {
      throw std::invalid_argument("task text needs the training files --train-src and --train-tgt");
    }
    if (options.task == Task::kClassify && options.tsv.count("train") == 0) {
      throw std::invalid_argument("task classify needs the training file --train-tsv");
    }
    if (options.cleaning.max_bytes < 0 || options.cleaning.max_tokens < 0)
      throw std::invalid_argument("--clean-max-bytes and --clean-max-tokens must be >= 0");
    if (!options.spm_model.empty() && !fs::is_regular_file(options.spm_model))
      throw std::invalid_argument("--spm-model " + options.spm_model.string() + ": no such file");
    if (options.strip_spaces && options.tokenizer == TokenizerKind::kWord) {
      throw std::invalid_argument(
          "--strip-spaces would leave one word a line: use --vocab char or spm");
    }
    return;
  }
  if (options.tokenizer != TokenizerKind::kWord) {
    throw std::invalid_argument("synthetic tasks use the word tokenizer, not '" +
                                settings::name_of(kTokenizerKindNames, options.tokenizer) + "'");
  }
  for (const auto& [split, size] : options.sizes) {
    if (size < 0) throw std::invalid_argument(split + " size must not be negative");
  }
  if (options.sizes.count("train") == 0 || options.sizes.at("train") < 1) {
    throw std::invalid_argument("train size must be at least 1");
  }
}

namespace {

// One split: its pairs (streamed) and the files they came from.
struct Split {
  std::unique_ptr<PairSource> pairs;
  std::vector<SourceFile> sources;
};

// A text split's pairs and files (the source, then the target file, if any).
Split open_text_split(const std::string& split, const std::vector<fs::path>& files,
                      const PrepareOptions& options) {
  const TextReadOptions read{split == "train" ? &options.cleaning : nullptr, options.strip_spaces};
  Split opened;
  opened.pairs =
      files.size() == 2 ? text_pairs(files[0], files[1], read) : labeled_text(files[0], read);
  for (const auto& file : files) {
    opened.sources.push_back({fs::absolute(file).lexically_normal().string(), sha256_file(file)});
  }
  return opened;
}

SyntheticTask synthetic_task(Task task) {
  switch (task) {
    case Task::kCopy: return SyntheticTask::kCopy;
    case Task::kReverse: return SyntheticTask::kReverse;
    case Task::kMajority: return SyntheticTask::kMajority;
    default: throw std::logic_error("not a synthetic task");
  }
}

std::map<std::string, Split> open_splits(const PrepareOptions& options) {
  std::map<std::string, Split> splits;
  for (size_t index = 0; index < kSplits.size(); ++index) {
    const std::string& split = kSplits[index];
    if (options.task == Task::kText) {
      const auto files = options.text.find(split);
      if (files != options.text.end())
        splits[split] = open_text_split(split, {files->second.src, files->second.tgt}, options);
    } else if (options.task == Task::kClassify) {
      const auto file = options.tsv.find(split);
      if (file != options.tsv.end())
        splits[split] = open_text_split(split, {file->second}, options);
    } else {
      const auto size = options.sizes.find(split);
      if (size == options.sizes.end() || size->second == 0) continue;
      splits[split].pairs = synthetic_pairs(synthetic_task(options.task), options.synthetic,
                                            size->second, mix_seed(options.seed, index));
    }
  }
  return splits;
}

// Rank 0: every rank's shards of a split, renamed in rank order to their
// place in the dataset: the examples' order is the input's for any rank count.
std::vector<ShardEntry> publish_shards(const fs::path& dir, const std::string& split,
                                       const std::vector<RangeWritten>& ranges) {
  std::vector<ShardEntry> shards;
  for (const RangeWritten& range : ranges) {
    for (ShardEntry entry : range.shards) {
      const std::string name = shard_file_name(split, static_cast<int64_t>(shards.size()));
      fs::rename(dir / entry.file, dir / name);
      entry.file = name;
      logging::info("{}: {} ({} examples)", split, name, entry.num_examples);
      shards.push_back(std::move(entry));
    }
  }
  return shards;
}

// Rank 0: a split's entry in the manifest, from what every rank wrote of it
// (in rank order); the training split's summed cleaning counts (text tasks)
// in the manifest's "prepare" record.
void add_split(Manifest& manifest, const fs::path& dir, const std::string& split,
               const Split& opened, const std::vector<RangeWritten>& ranges,
               const PrepareOptions& options) {
  SplitEntry& entry = manifest.splits[split];
  entry.sources = opened.sources;
  entry.shards = publish_shards(dir, split, ranges);
  if (split == "train" && !is_synthetic_task(options.task)) {
    CleaningReport cleaning;
    for (const RangeWritten& range : ranges) cleaning += range.cleaning;
    logging::info(
        "train: cleaning kept {} examples; dropped {} empty, {} over {} bytes, {} too short, "
        "{} too long, {} over the length ratio, {} over {} tokens",
        cleaning.kept, cleaning.empty, cleaning.too_many_bytes, options.cleaning.max_bytes,
        cleaning.too_short, cleaning.too_long, cleaning.ratio, cleaning.too_many_tokens,
        options.cleaning.max_tokens);
    manifest.prepare["cleaning"] = cleaning.to_json();
  }
  if (entry.shards.empty())
    throw std::runtime_error(split + ": no example is left" +
                             (split == "train" ? " after cleaning" : std::string()));
}

// What the manifest records about how the dataset was made.
json describe(const PrepareOptions& options) {
  json described = {{"task", settings::name_of(kTaskNames, options.task)},
                    {"shard_size", options.shard_size},
                    {"deflate", options.shard.deflate}};
  if (is_synthetic_task(options.task)) {
    described.update({{"seed", options.seed},
                      {"sizes", options.sizes},
                      {"symbols", options.synthetic.symbols},
                      {"min_len", options.synthetic.min_len},
                      {"max_len", options.synthetic.max_len}});
    if (is_classification_task(options.task)) described["classes"] = options.synthetic.classes;
  } else {
    json files = json::object();
    for (const auto& [split, pair] : options.text) {
      files[split] = {{"src", pair.src.string()}, {"tgt", pair.tgt.string()}};
    }
    for (const auto& [split, file] : options.tsv) files[split] = {{"tsv", file.string()}};
    described.update({{"files", files},
                      {"tokenizer", settings::name_of(kTokenizerKindNames, options.tokenizer)},
                      {"tokenizer_sample", options.tokenizer_sample},
                      {"joint_vocab", options.joint_vocab},
                      {"strip_spaces", options.strip_spaces},
                      {"cleaning",
                       {{"min_words", options.cleaning.min_words},
                        {"max_words", options.cleaning.max_words},
                        {"max_ratio", options.cleaning.max_ratio},
                        {"max_bytes", options.cleaning.max_bytes},
                        {"max_tokens", options.cleaning.max_tokens}}}});
    if (options.tokenizer == TokenizerKind::kSentencePiece) {
      described.update(
          {{"spm_model", options.spm_model.string()},
           {"spm_model_type", settings::name_of(kSpmModelTypeNames, options.spm.model_type)},
           {"spm_vocab_size", options.spm.vocab_size},
           {"spm_character_coverage", options.spm.character_coverage}});
    } else {
      described.update(
          {{"min_count", options.vocab.min_count}, {"max_vocab", options.vocab.max_size}});
    }
  }
  return {{"command", options.command}, {"options", described}};
}

// The manifest's fields known before any data is read: the task, the
// tokenizer and label files, and how the dataset is made.
Manifest outline(const PrepareOptions& options, const launch::Ranks& ranks) {
  Manifest manifest;
  manifest.tokenizer_kind =
      is_synthetic_task(options.task) ? TokenizerKind::kWord : options.tokenizer;
  const bool joint = joint_tokenizer(options);
  manifest.src_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "src");
  manifest.tgt_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "tgt");
  if (is_classification_task(options.task)) {
    manifest.task = kClassificationTask;
    manifest.labels_file = kLabelsFile;
  }
  manifest.prepare = describe(options);
  manifest.prepare["ranks"] = ranks.size();
  return manifest;
}

// Builds the dataset in `dir` in four phases. Each block names who does its
// work — launch::together: every rank, on_main: rank 0, on_others: every
// rank but 0 — and no rank goes on before the block is done on all.
Manifest build(const PrepareOptions& options, const fs::path& dir, const launch::Ranks& ranks) {
  Manifest manifest = outline(options, ranks);

  // 1. Open. Every rank: the splits.
  std::map<std::string, Split> splits;
  launch::together(ranks, [&] { splits = open_splits(options); });

  // 2. Vocabulary. Rank 0: trains the tokenizers (on a sample of the cleaned
  // training pairs), collects the labels and saves them. The others: load them.
  Tokenizers tokenizers;
  LabelSet labels;
  launch::on_main(ranks, [&] {
    tokenizers = make_tokenizers(options, *splits.at("train").pairs);
    tokenizers.src->save(dir / manifest.src_tokenizer_file);
    if (!tokenizers.joint()) tokenizers.tgt->save(dir / manifest.tgt_tokenizer_file);
    if (manifest.is_classification()) {
      labels = make_labels(options, *splits.at("train").pairs);
      labels.save(dir / manifest.labels_file);
    }
  });
  launch::on_others(ranks, [&] {
    tokenizers.src = load_encoder(manifest.tokenizer_kind, dir / manifest.src_tokenizer_file);
    tokenizers.tgt = joint_tokenizer(options)
                         ? tokenizers.src
                         : load_encoder(manifest.tokenizer_kind, dir / manifest.tgt_tokenizer_file);
    if (manifest.is_classification()) labels = LabelSet::load(dir / manifest.labels_file);
  });
  manifest.src_vocab_size = tokenizers.src->vocab_size();
  manifest.tgt_vocab_size = tokenizers.tgt->vocab_size();
  manifest.num_labels = labels.size();

  // 3. Shards, split by split. Every rank: encodes its range. Rank 0: names
  // every rank's shards in order and sums the cleaning counts.
  const ShardAttrs attrs{manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special,
                         manifest.num_labels};
  for (const auto& [split, opened] : splits) {
    RangeWritten written;
    launch::together(ranks, [&] {
      written = write_range(dir, split, *opened.pairs, tokenizers, labels, attrs, options, ranks);
    });
    const std::vector<RangeWritten> ranges = gather(ranks, written);
    launch::on_main(ranks, [&] { add_split(manifest, dir, split, opened, ranges, options); });
  }

  // 4. Manifest. Rank 0: each split's index (split_index.h) and the
  // dataset's content_sha256 (the same for any rank count) from the shards
  // read back, then the manifest.
  launch::on_main(ranks, [&] {
    const auto begin = std::chrono::steady_clock::now();
    for (auto& [split, entry] : manifest.splits) entry.index = write_split_index(dir, split, entry);
    manifest.content_sha256 = content_sha256(dir, manifest);
    logging::info("split indexes written and content_sha256 {} (the shards read back in {:.1f} s)",
                  manifest.content_sha256, base::seconds_since(begin));
    write_manifest(dir, manifest);
  });
  return manifest;
}

}  // namespace

Manifest prepare_dataset(const PrepareOptions& options) {
  const launch::Ranks ranks;
  check_options(options);
  const fs::path out = without_trailing_separator(options.out);

  // Rank 0 checks the output and creates the temporary directory all ranks
  // write into: mkdtemp's name is unique across jobs and hosts, as a PID is not.
  std::string temp_name;
  launch::on_main(ranks, [&] {
    check_output(out, options.force);
    if (out.has_parent_path()) base::make_directories(out.parent_path(), "the folder of --out");
    temp_name = unique_directory_beside(out);
  });
  const fs::path temp = ranks.broadcast(temp_name);
  try {
    Manifest manifest = build(options, temp, ranks);
    launch::on_main(ranks, [&] { publish(temp, out, options.force); });
    return ranks.is_main() ? manifest : read_manifest(out);
  } catch (...) {
    if (ranks.is_main()) {
      std::error_code ignored;
      fs::remove_all(temp, ignored);
    }
    throw;
  }
}

}  // namespace data
