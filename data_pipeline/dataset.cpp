#include "data_pipeline/dataset.h"

#include <stdexcept>

#include "data_pipeline/sha256.h"

namespace data {

namespace {

const SplitEntry& find_split(const Manifest& manifest, const std::filesystem::path& dir,
                             const std::string& split) {
  const auto found = manifest.splits.find(split);
  if (found != manifest.splits.end()) return found->second;
  std::string available;
  for (const auto& entry : manifest.splits)
    available += (available.empty() ? "" : ", ") + entry.first;
  throw std::runtime_error("dataset " + dir.string() + " has no split '" + split +
                           "' (it has: " + available + ")");
}

// The shard must say what the manifest says about it.
void check_against_manifest(const ShardReader& reader, const ShardEntry& entry,
                            const Manifest& manifest) {
  const auto& attrs = reader.attrs();
  std::string problem;
  if (attrs.src_vocab_size != manifest.src_vocab_size ||
      attrs.tgt_vocab_size != manifest.tgt_vocab_size) {
    problem = "vocabulary sizes differ from the manifest's";
  } else if (attrs.special != manifest.special) {
    problem = "special ids differ from the manifest's";
  } else if (attrs.num_labels != manifest.num_labels) {
    problem = "num_labels " + std::to_string(attrs.num_labels) + " differs from the manifest's " +
              std::to_string(manifest.num_labels);
  } else if (reader.num_examples() != entry.num_examples ||
             reader.num_tokens(true) != entry.src_tokens ||
             reader.num_tokens(false) != entry.tgt_tokens) {
    problem = "example or token counts differ from the manifest's";
  }
  if (!problem.empty())
    throw std::runtime_error("shard " + reader.file().string() + ": " + problem);
}

// A classification dataset's label file, which must hold the manifest's count.
LabelSet load_labels(const std::filesystem::path& dir, const Manifest& manifest) {
  if (!manifest.is_classification()) return {};
  const auto file = dir / manifest.labels_file;
  LabelSet labels = LabelSet::load(file);
  if (labels.size() != manifest.num_labels) {
    throw std::runtime_error(file.string() + " has " + std::to_string(labels.size()) +
                             " labels, the manifest's labels.count is " +
                             std::to_string(manifest.num_labels));
  }
  return labels;
}

}  // namespace

Dataset::Dataset(const std::filesystem::path& dir, const std::string& split,
                 const DatasetOptions& options)
    : dir_(dir),
      manifest_(read_manifest(dir)),
      labels_(load_labels(dir, manifest_)),
      split_(split),
      options_(options),
      entry_(find_split(manifest_, dir, split)),
      index_(dir, split, entry_) {
  if (options_.max_open_shards == 0) options_.max_open_shards = 1;
  if (options_.check_shards) check_shards();
}

void Dataset::check_shards() const {
  for (const auto& shard : entry_.shards) {
    const auto path = dir_ / shard.file;
    if (options_.verify_checksums && std::filesystem::is_regular_file(path) &&
        sha256_file(path) != shard.sha256)
      throw std::runtime_error("shard " + path.string() + ": sha256 differs from the manifest's");
    check_against_manifest(ShardReader(path), shard, manifest_);
  }
  if (options_.verify_checksums && sha256_file(dir_ / entry_.index.file) != entry_.index.sha256)
    throw std::runtime_error("split index " + (dir_ / entry_.index.file).string() +
                             ": sha256 differs from the manifest's");
}

const ShardReader& Dataset::open(size_t shard) const {
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (it->first != shard) continue;
    open_.splice(open_.begin(), open_, it);  // most recently used first
    return *open_.front().second;
  }
  if (open_.size() >= options_.max_open_shards) open_.pop_back();
  open_.emplace_front(shard, std::make_unique<ShardReader>(dir_ / entry_.shards[shard].file));
  return *open_.front().second;
}

Example Dataset::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw std::out_of_range("example " + std::to_string(index) + " outside split '" + split_ +
                            "' of " + std::to_string(size()) + " examples");
  }
  const int64_t shard = index_.shard_of(index);
  const ExampleLocation where = index_.location(index);
  std::lock_guard<std::mutex> lock(mutex_);
  return open(static_cast<size_t>(shard)).read_example(where, index - index_.shard_begin(shard));
}

}  // namespace data
