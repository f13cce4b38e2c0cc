#include "data_pipeline/prepare/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/prepare/ranks.h"
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
  bool joint() const { return src == tgt; }
};

bool joint_tokenizer(const PrepareOptions& options) {
  return is_synthetic(options.task) || options.joint_vocab || !options.spm_model.empty();
}

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

// What rank 0 trained and saved in the dataset directory, as an encoder.
std::shared_ptr<Tokenizer> load_encoder(const std::string& kind, const fs::path& file) {
  if (kind == "spm") return SentencePieceTokenizer::load(file);
  return load_tokenizer(kind, file);
}

// Shard files are first named per rank ("train.r0001-00000.h5"), then given
// their place in the dataset ("train-00003.h5") by rank 0 (publish_shards).
std::string rank_shard_name(const std::string& split, int rank, int64_t index) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s.r%04d-%05lld.h5", split.c_str(), rank,
                static_cast<long long>(index));
  return name;
}

// Logs progress on rank 0 at most every few seconds: lines, lines/s, ETA.
class Progress {
 public:
  Progress(const Ranks& ranks, std::string split, int64_t total)
      : enabled_(ranks.is_main()), split_(std::move(split)), total_(total) {}
  void update(int64_t done) {
    if (!enabled_) return;
    const double elapsed = seconds(std::chrono::steady_clock::now() - start_);
    if (elapsed - last_ < 5.0) return;
    last_ = elapsed;
    const double rate = done / elapsed;
    spdlog::info("{}: {} / {} lines of rank 0's share, {:.0f} lines/s, ETA {:.0f} s", split_, done,
                 total_, rate, (total_ - done) / std::max(rate, 1e-9));
  }

 private:
  static double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }
  bool enabled_;
  std::string split_;
  int64_t total_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_ = 0;
};

// Encodes this rank's range of a split into shards of at most shard_size
// examples (and shard_bytes, when set).
std::vector<ShardEntry> write_range(const fs::path& dir, const std::string& split,
                                    const Corpus& corpus, const Tokenizers& tokenizers,
                                    const ShardAttrs& attrs, const PrepareOptions& options,
                                    const Ranks& ranks) {
  std::vector<ShardEntry> shards;
  ShardData shard;
  const auto flush = [&] {
    const auto name = rank_shard_name(split, ranks.rank(), static_cast<int64_t>(shards.size()));
    write_shard(dir / name, shard, attrs, options.shard);
    shards.push_back({name, shard.size(), static_cast<int64_t>(shard.src.tokens.size()),
                      static_cast<int64_t>(shard.tgt.tokens.size()), sha256_file(dir / name)});
    shard = ShardData{};
  };
  const auto bytes = [&] {  // on disk, roughly: int32 tokens, int64 offsets and ids
    return 4 * static_cast<int64_t>(shard.src.tokens.size() + shard.tgt.tokens.size()) +
           24 * shard.size();
  };
  const auto [begin, end] = ranks.range(static_cast<int64_t>(corpus.text.src.size()));
  Progress progress(ranks, split, end - begin);
  for (int64_t i = begin; i < end; ++i) {
    shard.src.append(tokenizers.src->encode(corpus.text.src[i]));
    shard.tgt.append(tokenizers.tgt->encode(corpus.text.tgt[i]));
    shard.ids.push_back(corpus.ids[i]);
    if (shard.size() == options.shard_size || (options.shard_bytes > 0 && bytes() >= options.shard_bytes))
      flush();
    progress.update(i + 1 - begin);
  }
  if (shard.size() > 0) flush();
  return shards;
}

json to_json(const ShardEntry& e) {
  return {{"file", e.file}, {"num_examples", e.num_examples}, {"src_tokens", e.src_tokens},
          {"tgt_tokens", e.tgt_tokens}, {"sha256", e.sha256}};
}

// Rank 0: every rank's shards of a split, renamed in rank order to their
// place in the dataset: the examples' order is the input's for any rank count.
std::vector<ShardEntry> publish_shards(const fs::path& dir, const std::string& split,
                                       const std::vector<std::string>& gathered) {
  std::vector<ShardEntry> shards;
  for (const auto& text : gathered) {
    for (const auto& e : json::parse(text)) {
      ShardEntry entry{e.at("file"), e.at("num_examples"), e.at("src_tokens"), e.at("tgt_tokens"),
                       e.at("sha256")};
      const std::string name = shard_file_name(split, static_cast<int64_t>(shards.size()));
      fs::rename(dir / entry.file, dir / name);
      entry.file = name;
      spdlog::info("{}: {} ({} examples)", split, name, entry.num_examples);
      shards.push_back(std::move(entry));
    }
  }
  return shards;
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

// Every rank reads (and cleans) the same corpora; rank 0 trains the
// tokenizers, the others load what it saved; each rank encodes its range of
// every split; rank 0 names the shards in order and writes the manifest.
Manifest build(const PrepareOptions& options, const fs::path& dir, const Ranks& ranks) {
  std::map<std::string, Corpus> corpora;
  together(ranks, [&] { corpora = load_corpora(options); });

  Manifest manifest;
  manifest.tokenizer_kind = is_synthetic(options.task) ? "word" : options.tokenizer;
  const bool joint = joint_tokenizer(options);
  manifest.src_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "src");
  manifest.tgt_tokenizer_file = tokenizer_file_name(manifest.tokenizer_kind, joint ? "" : "tgt");
  Tokenizers tokenizers;
  together(ranks, [&] {
    if (!ranks.is_main()) return;
    tokenizers = make_tokenizers(options, corpora.at("train").text);
    tokenizers.src->save(dir / manifest.src_tokenizer_file);
    if (!tokenizers.joint()) tokenizers.tgt->save(dir / manifest.tgt_tokenizer_file);
  });
  together(ranks, [&] {
    if (ranks.is_main()) return;
    tokenizers.src = load_encoder(manifest.tokenizer_kind, dir / manifest.src_tokenizer_file);
    tokenizers.tgt = joint ? tokenizers.src
                           : load_encoder(manifest.tokenizer_kind, dir / manifest.tgt_tokenizer_file);
  });
  manifest.src_vocab_size = tokenizers.src->vocab_size();
  manifest.tgt_vocab_size = tokenizers.tgt->vocab_size();
  manifest.prepare = describe(options);
  if (options.task == "text") {
    manifest.prepare["options"]["cleaning"] = {{"min_words", options.cleaning.min_words},
                                               {"max_words", options.cleaning.max_words},
                                               {"max_ratio", options.cleaning.max_ratio}};
    manifest.prepare["cleaning"] = corpora.at("train").cleaning;
  }
  manifest.prepare["ranks"] = ranks.size();

  const ShardAttrs attrs{manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special};
  for (const auto& split : kSplits) {
    const auto corpus = corpora.find(split);
    if (corpus == corpora.end()) continue;
    json written = json::array();
    together(ranks, [&] {
      for (const auto& shard : write_range(dir, split, corpus->second, tokenizers, attrs, options, ranks))
        written.push_back(to_json(shard));
    });
    const auto gathered = ranks.gather(written.dump());
    together(ranks, [&] {
      if (!ranks.is_main()) return;
      manifest.splits[split].sources = corpus->second.sources;
      manifest.splits[split].shards = publish_shards(dir, split, gathered);
    });
  }
  together(ranks, [&] {
    if (ranks.is_main()) write_manifest(dir, manifest);
  });
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
  const Ranks ranks;
  check_options(options);
  const fs::path out = without_trailing_separator(options.out);

  // Rank 0 checks the output and creates the temporary directory all ranks write into.
  std::string temp_name;
  together(ranks, [&] {
    if (!ranks.is_main()) return;
    check_output(out, options.force);
    temp_name = out.string() + ".tmp-" + std::to_string(::getpid());
    fs::remove_all(temp_name);
    fs::create_directories(temp_name);
  });
  const fs::path temp = ranks.broadcast(temp_name);
  try {
    Manifest manifest = build(options, temp, ranks);
    together(ranks, [&] {
      if (ranks.is_main()) publish(temp, out, std::to_string(::getpid()));
    });
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
