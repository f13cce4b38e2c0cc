#include "data_pipeline/prepare/prepare.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <type_traits>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/labels.h"
#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/labeled_text.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/prepare/tokenizers.h"
#include "data_pipeline/random.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/split_index.h"
#include "launch/file_write.h"
#include "launch/logging.h"
#include "launch/ranks.h"

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
  Progress(const launch::Ranks& ranks, std::string split, int64_t total)
      : enabled_(ranks.is_main()), split_(std::move(split)), total_(total) {}
  void update(int64_t done) {
    if (!enabled_) return;
    const double elapsed = seconds(std::chrono::steady_clock::now() - start_);
    if (elapsed - last_ < 5.0) return;
    last_ = elapsed;
    const double rate = done / elapsed;
    logging::info("{}: {} / {} lines of rank 0's share, {:.0f} lines/s, ETA {:.0f} s", split_, done,
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

// What one rank wrote of a split.
struct RangeWritten {
  std::vector<ShardEntry> shards;  // in example order, named by rank_shard_name
  CleaningReport cleaning;         // what cleaning kept and dropped of the range
};

// Encodes this rank's range of a split into shards of at most shard_size
// examples (and shard_mb MiB, when set); with `labels` (classification), tgt
// is the label's name.
RangeWritten write_range(const fs::path& dir, const std::string& split, const PairSource& pairs,
                         const Tokenizers& tokenizers, const LabelSet& labels,
                         const ShardAttrs& attrs, const PrepareOptions& options,
                         const launch::Ranks& ranks) {
  RangeWritten written;
  ShardData shard;
  const auto flush = [&] {
    const auto name =
        rank_shard_name(split, ranks.rank(), static_cast<int64_t>(written.shards.size()));
    write_shard(dir / name, shard, attrs, options.shard);
    written.shards.push_back({name, shard.size(), static_cast<int64_t>(shard.src.tokens.size()),
                              static_cast<int64_t>(shard.tgt.tokens.size()),
                              sha256_file(dir / name)});
    shard = ShardData{};
  };
  const auto bytes = [&] {  // on disk, roughly: int32 tokens, int64 offsets and ids
    return 4 * static_cast<int64_t>(shard.src.tokens.size() + shard.tgt.tokens.size()) +
           24 * shard.size();
  };
  const auto [begin, end] = ranks.range(pairs.size());
  Progress progress(ranks, split, end - begin);
  // The token cap is a cleaning rule: training split, text tasks (prepare.h).
  const bool capped = split == "train" && !is_synthetic_task(options.task);
  pairs.read(begin, end, written.cleaning, [&](SentencePair& pair) {
    std::vector<int32_t> src = tokenizers.src->encode(pair.src);
    std::vector<int32_t> tgt;
    if (attrs.num_labels == 0) tgt = tokenizers.tgt->encode(pair.tgt);
    if (capped &&
        !within_token_cap(static_cast<int64_t>(src.size()), static_cast<int64_t>(tgt.size()),
                          options.cleaning, written.cleaning))
      return;
    shard.src.append(src);
    if (attrs.num_labels > 0) {
      const int32_t label = labels.id(pair.tgt);
      if (label < 0)
        throw InputError("label '" + pair.tgt + "' does not occur in the training split");
      shard.tgt.append({});
      shard.labels.push_back(label);
    } else {
      shard.tgt.append(tgt);
    }
    shard.ids.push_back(pair.id);
    if (shard.size() == options.shard_size ||
        (options.shard_mb > 0 && bytes() >= (options.shard_mb << 20)))
      flush();
    progress.update(pair.id + 1 - begin);
  });
  if (shard.size() > 0) flush();
  return written;
}

// Bytes for ranks.gather, read back in the order they were written. The
// ranks run one build of this program, so a number travels as its bytes; a
// string travels as its length, then its characters.
class ByteWriter {
 public:
  template <typename T>
  ByteWriter& put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  ByteWriter& put(const std::string& text) {
    put(static_cast<int64_t>(text.size()));
    bytes_ += text;
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  ByteReader& get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(&value, take(sizeof value), sizeof value);
    return *this;
  }
  ByteReader& get(std::string& text) {
    int64_t size = 0;
    get(size);
    text.assign(take(static_cast<size_t>(size)), static_cast<size_t>(size));
    return *this;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const char* take(size_t size) {
    if (size > bytes_.size() - at_) throw std::logic_error("a rank's shard list is cut short");
    const char* at = bytes_.data() + at_;
    at_ += size;
    return at;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

std::string to_bytes(const RangeWritten& written) {
  ByteWriter out;
  out.put(written.cleaning);
  for (const ShardEntry& s : written.shards)
    out.put(s.file).put(s.num_examples).put(s.src_tokens).put(s.tgt_tokens).put(s.sha256);
  return out.bytes();
}

RangeWritten from_bytes(const std::string& bytes) {
  ByteReader in(bytes);
  RangeWritten written;
  in.get(written.cleaning);
  while (!in.done()) {
    ShardEntry& s = written.shards.emplace_back();
    in.get(s.file).get(s.num_examples).get(s.src_tokens).get(s.tgt_tokens).get(s.sha256);
  }
  return written;
}

// Collective. What every rank wrote of a split, in rank order, on rank 0
// (empty elsewhere).
std::vector<RangeWritten> gather(const launch::Ranks& ranks, const RangeWritten& written) {
  std::vector<RangeWritten> all;
  for (const std::string& bytes : ranks.gather(to_bytes(written))) all.push_back(from_bytes(bytes));
  return all;
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
      described.update({{"spm_model", options.spm_model.string()},
                        {"spm_model_type", settings::name_of(kSpmModelTypeNames,
                                                             options.spm.model_type)},
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
                  manifest.content_sha256,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    write_manifest(dir, manifest);
  });
  return manifest;
}

// A new directory "<out>.tmp-XXXXXX" of a name no other job uses (random,
// made with mkdir, which fails where the name exists). Not mkdtemp: its
// directory is 0700 whatever the umask, and the rename that publishes it
// keeps that, so a colleague's job could not read a shared dataset; mkdir
// gives the mode of any directory its user makes (0777 less the umask) and
// keeps the setgid bit of a project directory, whose group then owns the
// dataset's files.
std::string unique_directory_beside(const fs::path& out) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = out.string() + ".tmp-";
    for (int i = 0; i < 6; ++i) name += letters[entropy() % (sizeof(letters) - 1)];
    if (::mkdir(name.c_str(), 0777) == 0) return name;
    if (errno != EEXIST) {
      const int error = errno;
      throw std::runtime_error("cannot create a directory beside " + out.string() + ": " +
                               std::strerror(error));
    }
  }
  throw std::runtime_error("cannot create a directory beside " + out.string() +
                           ": 100 random names taken");
}

// "data/copy/" -> "data/copy": sibling paths like "<out>.tmp-XXXXXX" need a file name.
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

// Renames the finished `temp` to `out`. Without --force, only onto nothing
// or an empty directory: rename(2) refuses a non-empty target atomically
// (ENOTEMPTY or EEXIST, on every POSIX file system, NFS and Lustre included),
// so of two prepare_data started on one --out (a Slurm array, a job
// submitted twice) the first to finish publishes and the other fails,
// instead of replacing a dataset a trainer may already read. With --force,
// an existing `out` is moved aside first, then removed.
void publish(const fs::path& temp, const fs::path& out, bool force) {
  if (!force || !fs::exists(out)) {
    std::error_code error;
    fs::rename(temp, out, error);
    if (error == std::errc::directory_not_empty || error == std::errc::file_exists)
      throw std::runtime_error("output directory " + out.string() +
                               " was filled by another prepare_data while this one ran: it is "
                               "left as that one wrote it, and this one's dataset is discarded" +
                               std::string(force ? "" : " (pass --force to replace it)"));
    if (error) throw fs::filesystem_error("cannot publish the dataset", temp, out, error);
    return;
  }
  const fs::path old = temp.string() + ".old";  // unique, as temp is
  fs::rename(out, old);
  fs::rename(temp, out);
  fs::remove_all(old);
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
    if (out.has_parent_path()) launch::make_directories(out.parent_path(), "the folder of --out");
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
