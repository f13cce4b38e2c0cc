#include "data_pipeline/prepare/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/random.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/vocab_tokenizer.h"

namespace data {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_synthetic(const std::string& task) { return task == "copy" || task == "reverse"; }

void check_options(const PrepareOptions& options) {
  if (options.task != "text" && !is_synthetic(options.task)) {
    throw std::invalid_argument("unknown task '" + options.task + "' (expected copy, reverse or text)");
  }
  if (options.shard_size < 1) throw std::invalid_argument("shard size must be at least 1");
  if (options.shard.deflate < 0 || options.shard.deflate > 9) {
    throw std::invalid_argument("deflate level must be in 0..9");
  }
  if (options.task == "text") {
    const auto& kinds = tokenizer_kinds();
    if (std::find(kinds.begin(), kinds.end(), options.tokenizer) == kinds.end()) {
      throw std::invalid_argument("unknown tokenizer kind '" + options.tokenizer + "'");
    }
    if (options.text.count("train") == 0) {
      throw std::invalid_argument("task text needs the training files --train-src and --train-tgt");
    }
    return;
  }
  if (options.tokenizer != "word") {
    throw std::invalid_argument("synthetic tasks use the word tokenizer, not '" + options.tokenizer + "'");
  }
  for (const auto& [split, size] : options.sizes) {
    if (size < 0) throw std::invalid_argument(split + " size must not be negative");
  }
  if (options.sizes.count("train") == 0 || options.sizes.at("train") < 1) {
    throw std::invalid_argument("train size must be at least 1");
  }
}

// Sentence pairs of one split, their ids and the files they came from.
struct Corpus {
  ParallelText text;
  std::vector<int64_t> ids;  // [n] input line (text) or position (synthetic)
  std::vector<SourceFile> sources;
  nlohmann::json cleaning;   // the training split's CleaningReport
};

std::vector<int64_t> positions(size_t n) {
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

std::map<std::string, Corpus> load_corpora(const PrepareOptions& options) {
  std::map<std::string, Corpus> corpora;
  for (size_t index = 0; index < kSplits.size(); ++index) {
    const std::string& split = kSplits[index];
    if (options.task == "text") {
      const auto files = options.text.find(split);
      if (files == options.text.end()) continue;
      Corpus corpus;
      corpus.text = read_parallel(files->second.src, files->second.tgt);
      for (const auto& file : {files->second.src, files->second.tgt}) {
        corpus.sources.push_back({fs::absolute(file).lexically_normal().string(), sha256_file(file)});
      }
      if (split == "train") {
        const CleaningReport report = clean_corpus(corpus.text, options.cleaning, corpus.ids);
        spdlog::info("train: cleaning kept {} pairs; dropped {} empty, {} too short, {} too long, "
                     "{} over the length ratio", report.kept, report.empty, report.too_short,
                     report.too_long, report.ratio);
        if (report.kept == 0) throw std::runtime_error("cleaning dropped every training pair");
        corpus.cleaning = report.to_json();
      } else {
        corpus.ids = positions(corpus.text.src.size());
      }
      corpora[split] = std::move(corpus);
    } else {
      const auto size = options.sizes.find(split);
      if (size == options.sizes.end() || size->second == 0) continue;
      corpora[split].text = make_synthetic(parse_synthetic_task(options.task), options.synthetic,
                                           size->second, mix_seed(options.seed, index));
      corpora[split].ids = positions(static_cast<size_t>(size->second));
    }
  }
  return corpora;
}

// The source and target tokenizers; one shared object when joint.
struct Tokenizers {
  std::shared_ptr<Tokenizer> src;
  std::shared_ptr<Tokenizer> tgt;
};

Tokenizers make_tokenizers(const PrepareOptions& options, const ParallelText& train) {
  if (is_synthetic(options.task)) {
    auto symbols = std::make_shared<VocabTokenizer>(VocabTokenizer::Unit::kWord,
                                                    Vocab(synthetic_symbols(options.synthetic.symbols)));
    return {symbols, symbols};
  }
  if (options.tokenizer == "spm" && !options.spm_model.empty()) {
    std::shared_ptr<Tokenizer> given = SentencePieceTokenizer::load(options.spm_model);
    return {given, given};
  }
  const auto train_on = [&](std::vector<const std::vector<std::string>*> sides) {
    std::vector<std::string_view> text;
    for (const auto* lines : sides) text.insert(text.end(), lines->begin(), lines->end());
    if (options.tokenizer == "spm")
      return std::shared_ptr<Tokenizer>(SentencePieceTokenizer::train(text, options.spm));
    return std::shared_ptr<Tokenizer>(train_tokenizer(options.tokenizer, text, options.vocab));
  };
  if (options.joint_vocab) {
    auto joint = train_on({&train.src, &train.tgt});
    return {joint, joint};
  }
  return {train_on({&train.src}), train_on({&train.tgt})};
}

// Encodes a split and writes it as shards of at most shard_size examples.
SplitEntry write_split(const fs::path& dir, const std::string& split, const Corpus& corpus,
                       const Tokenizers& tokenizers, const ShardAttrs& attrs,
                       const PrepareOptions& options) {
  SplitEntry entry;
  entry.sources = corpus.sources;
  ShardData shard;
  const auto flush = [&] {
    const auto name = shard_file_name(split, static_cast<int64_t>(entry.shards.size()));
    write_shard(dir / name, shard, attrs, options.shard);
    entry.shards.push_back({name, shard.size(), static_cast<int64_t>(shard.src.tokens.size()),
                            static_cast<int64_t>(shard.tgt.tokens.size()), sha256_file(dir / name)});
    spdlog::info("{}: wrote {} ({} examples)", split, name, shard.size());
    shard = ShardData{};
  };
  const auto& text = corpus.text;
  for (size_t i = 0; i < text.src.size(); ++i) {
    shard.src.append(tokenizers.src->encode(text.src[i]));
    shard.tgt.append(tokenizers.tgt->encode(text.tgt[i]));
    shard.ids.push_back(corpus.ids[i]);
    if (shard.size() == options.shard_size) flush();
  }
  if (shard.size() > 0) flush();
  return entry;
}

// What the manifest records about how the dataset was made.
json describe(const PrepareOptions& options) {
  json described = {{"task", options.task},
                    {"shard_size", options.shard_size},
                    {"deflate", options.shard.deflate}};
  if (is_synthetic(options.task)) {
    described.update({{"seed", options.seed},
                      {"sizes", options.sizes},
                      {"symbols", options.synthetic.symbols},
                      {"min_len", options.synthetic.min_len},
                      {"max_len", options.synthetic.max_len}});
  } else {
    json files = json::object();
    for (const auto& [split, pair] : options.text) {
      files[split] = {{"src", pair.src.string()}, {"tgt", pair.tgt.string()}};
    }
    described.update({{"files", files},
                      {"tokenizer", options.tokenizer},
                      {"joint_vocab", options.joint_vocab}});
    if (options.tokenizer == "spm") {
      described.update({{"spm_model", options.spm_model.string()},
                        {"spm_model_type", options.spm.model_type},
                        {"spm_vocab_size", options.spm.vocab_size},
                        {"spm_character_coverage", options.spm.character_coverage},
                        {"spm_input_sentence_size", options.spm.input_sentence_size}});
    } else {
      described.update({{"min_count", options.vocab.min_count},
                        {"max_vocab", options.vocab.max_size}});
    }
  }
  return {{"command", options.command}, {"options", described}};
}

Manifest build(const PrepareOptions& options, const fs::path& dir) {
  const auto corpora = load_corpora(options);
  const auto tokenizers = make_tokenizers(options, corpora.at("train").text);
  const bool joint = tokenizers.src == tokenizers.tgt;

  Manifest manifest;
  manifest.tokenizer_kind = tokenizers.src->kind();
  manifest.src_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "src");
  manifest.tgt_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "tgt");
  tokenizers.src->save(dir / manifest.src_tokenizer_file);
  if (!joint) tokenizers.tgt->save(dir / manifest.tgt_tokenizer_file);
  manifest.src_vocab_size = tokenizers.src->vocab_size();
  manifest.tgt_vocab_size = tokenizers.tgt->vocab_size();
  manifest.prepare = describe(options);
  if (options.task == "text") {
    manifest.prepare["options"]["cleaning"] = {{"min_words", options.cleaning.min_words},
                                               {"max_words", options.cleaning.max_words},
                                               {"max_ratio", options.cleaning.max_ratio}};
    manifest.prepare["cleaning"] = corpora.at("train").cleaning;
  }

  const ShardAttrs attrs{manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special};
  for (const auto& split : kSplits) {
    const auto corpus = corpora.find(split);
    if (corpus == corpora.end()) continue;
    manifest.splits[split] = write_split(dir, split, corpus->second, tokenizers, attrs, options);
  }
  write_manifest(dir, manifest);
  return manifest;
}

// "data/copy/" -> "data/copy": sibling paths like "<out>.tmp-<pid>" need a file name.
fs::path without_trailing_separator(const fs::path& out) {
  const fs::path normal = out.lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

void check_output(const fs::path& out, bool force) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) {
    throw std::runtime_error("output path " + out.string() + " exists and is not a directory");
  }
  if (!fs::is_empty(out) && !force) {
    throw std::runtime_error("output directory " + out.string() +
                             " exists and is not empty (pass --force to replace it)");
  }
}

// Renames the finished `temp` to `out`, moving an existing `out` aside first.
void publish(const fs::path& temp, const fs::path& out, const std::string& suffix) {
  if (!fs::exists(out)) {
    fs::rename(temp, out);
    return;
  }
  const fs::path old = out.string() + ".old-" + suffix;
  fs::rename(out, old);
  fs::rename(temp, out);
  fs::remove_all(old);
}

}  // namespace

Manifest prepare_dataset(const PrepareOptions& options) {
  check_options(options);
  const fs::path out = without_trailing_separator(options.out);
  check_output(out, options.force);

  const std::string suffix = std::to_string(::getpid());
  const fs::path temp = out.string() + ".tmp-" + suffix;
  fs::remove_all(temp);
  fs::create_directories(temp);
  try {
    Manifest manifest = build(options, temp);
    publish(temp, out, suffix);
    return manifest;
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    throw;
  }
}

}  // namespace data
