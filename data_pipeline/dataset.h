// One split of a prepared dataset directory: examples by index, read lazily.
//
//   Dataset train("data/copy", "train");
//   train.size();                 // examples in the split
//   train.lengths().tgt[i];       // bare target length of example i
//   Example e = train.get(i);     // {id, src, tgt, label}, i in [0, size())
//   train.labels().name(e.label); // classification: the class's name
//
// Indices run over the split's shards in manifest order. Opening reads every
// shard's offsets, ids and labels (24 bytes per example, 32 with labels,
// plus 16 for the lengths) and checks them and the attributes against the
// manifest (and labels.txt against its count); tokens stay on disk
// and get(i) reads example i's two token ranges (hyperslabs) from a bounded
// set of open shards. Memory is bounded by the index, not by the corpus.
// get() is thread-safe (HDF5 calls are serialised).
#pragma once
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data_pipeline/example.h"
#include "data_pipeline/labels.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/shard_reader.h"

namespace data {

struct DatasetOptions {
  bool verify_checksums = false;  // sha256 of every shard against the manifest (reads everything)
  size_t max_open_shards = 8;
};

class Dataset {
 public:
  // Throws, naming the path, when the directory, its manifest, the split or
  // a shard is missing, when a shard disagrees with the manifest (sizes
  // always; checksums on request), or when its offsets are inconsistent.
  Dataset(const std::filesystem::path& dir, const std::string& split,
          const DatasetOptions& options = {});

  const Manifest& manifest() const { return manifest_; }
  const std::string& split() const { return split_; }
  int64_t size() const { return static_cast<int64_t>(lengths_.src.size()); }
  const ExampleLengths& lengths() const { return lengths_; }
  const LabelSet& labels() const { return labels_; }  // classification; empty for seq2seq

  // Throws, naming the shard file and the example, on a bad token id.
  Example get(int64_t index) const;

 private:
  const ShardReader& open(size_t shard) const;  // from the cache, or opened; mutex held

  std::filesystem::path dir_;
  Manifest manifest_;
  LabelSet labels_;
  std::string split_;
  DatasetOptions options_;
  std::vector<std::string> files_;    // [shards]
  std::vector<ShardIndex> indexes_;   // [shards]
  std::vector<int64_t> shard_begin_;  // [shards + 1] first index of each shard, then size()
  ExampleLengths lengths_;

  mutable std::mutex mutex_;
  mutable std::list<std::pair<size_t, std::unique_ptr<ShardReader>>> open_;  // most recent first
};

}  // namespace data
