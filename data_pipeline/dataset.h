// One split of a prepared dataset directory: examples by index.
//
//   Dataset train("data/copy", "train");
//   train.size();                 // examples in the split
//   train.lengths().tgt[i];       // bare target length of example i
//   Example e = train.get(i);     // {id, src, tgt}, i in [0, size())
//
// Indices run over the split's shards in manifest order. This version reads
// every shard into memory when opened; the interface (lengths up front,
// get(i) on demand) lets a later version keep only the offsets in memory and
// read tokens with hyperslabs.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data_pipeline/example.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/shard_format.h"

namespace data {

class Dataset {
 public:
  // Throws, naming the path, when the directory, its manifest, the split or
  // a shard is missing, or when a shard disagrees with the manifest.
  Dataset(const std::filesystem::path& dir, const std::string& split);

  const Manifest& manifest() const { return manifest_; }
  const std::string& split() const { return split_; }
  int64_t size() const { return static_cast<int64_t>(lengths_.src.size()); }
  const ExampleLengths& lengths() const { return lengths_; }

  Example get(int64_t index) const;

 private:
  Manifest manifest_;
  std::string split_;
  std::vector<ShardData> shards_;
  std::vector<int64_t> shard_begin_;  // [shards + 1] first index of each shard, then size()
  ExampleLengths lengths_;
};

}  // namespace data
