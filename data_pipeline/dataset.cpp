#include "data_pipeline/dataset.h"

#include <algorithm>
#include <stdexcept>

#include "data_pipeline/shard_reader.h"

namespace data {

namespace {

const SplitEntry& find_split(const Manifest& manifest, const std::filesystem::path& dir,
                             const std::string& split) {
  const auto found = manifest.splits.find(split);
  if (found != manifest.splits.end()) return found->second;
  std::string available;
  for (const auto& entry : manifest.splits) available += (available.empty() ? "" : ", ") + entry.first;
  throw std::runtime_error("dataset " + dir.string() + " has no split '" + split + "' (it has: " +
                           available + ")");
}

// The shard must say what the manifest says about it.
void check_against_manifest(const ShardReader& reader, const ShardData& data,
                            const ShardEntry& entry, const Manifest& manifest) {
  const auto& attrs = reader.attrs();
  std::string problem;
  if (attrs.src_vocab_size != manifest.src_vocab_size ||
      attrs.tgt_vocab_size != manifest.tgt_vocab_size) {
    problem = "vocabulary sizes differ from the manifest's";
  } else if (attrs.special != manifest.special) {
    problem = "special ids differ from the manifest's";
  } else if (data.size() != entry.num_examples ||
             static_cast<int64_t>(data.src.tokens.size()) != entry.src_tokens ||
             static_cast<int64_t>(data.tgt.tokens.size()) != entry.tgt_tokens) {
    problem = "example or token counts differ from the manifest's";
  }
  if (!problem.empty()) throw std::runtime_error("shard " + reader.file().string() + ": " + problem);
}

}  // namespace

Dataset::Dataset(const std::filesystem::path& dir, const std::string& split)
    : manifest_(read_manifest(dir)), split_(split) {
  shard_begin_.push_back(0);
  for (const auto& entry : find_split(manifest_, dir, split).shards) {
    const ShardReader reader(dir / entry.file);
    auto data = reader.read();
    check_against_manifest(reader, data, entry, manifest_);
    for (int64_t i = 0; i < data.size(); ++i) {
      lengths_.src.push_back(data.src.length(i));
      lengths_.tgt.push_back(data.tgt.length(i));
    }
    shard_begin_.push_back(shard_begin_.back() + data.size());
    shards_.push_back(std::move(data));
  }
}

Example Dataset::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw std::out_of_range("example " + std::to_string(index) + " outside split '" + split_ +
                            "' of " + std::to_string(size()) + " examples");
  }
  // The shard whose range [begin, next begin) holds `index`.
  const auto shard = std::upper_bound(shard_begin_.begin(), shard_begin_.end(), index) -
                     shard_begin_.begin() - 1;
  const ShardData& data = shards_[shard];
  const int64_t i = index - shard_begin_[shard];
  return {data.ids[i], data.src.at(i), data.tgt.at(i)};
}

}  // namespace data
