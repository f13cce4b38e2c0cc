// One split of a prepared dataset directory: examples by index, read lazily.
//
//   Dataset train("data/copy", "train");
//   train.size();                 // examples in the split
//   train.lengths().at(i).tgt;    // bare target length of example i
//   Example e = train.get(i);     // {id, src, tgt, label}, i in [0, size())
//   train.labels().name(e.label); // classification: the class's name
//
// Indices run over the split's shards in manifest order. Opening reads the
// manifest, the split index's header (split_index.h), labels.txt and every
// shard's attributes (unless check_shards is off: a job's ranks leave that to
// one rank per node, node_check.h), and checks them against the manifest; nothing per
// example is held: lengths() and get(i) read the index record by record, and
// get(i) reads example i's two token ranges (hyperslabs) from a bounded set
// of open shards. A rank's memory does not grow with the corpus. get() is thread-safe (HDF5 calls
// are serialised; the index is read with pread).
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
#include "data_pipeline/split_index.h"

namespace data {

struct DatasetOptions {
  bool verify_checksums = false;  // sha256 of every shard and the index against the manifest
                                  // (reads everything), in check_shards()
  size_t max_open_shards = 8;
  bool check_shards = true;  // at opening, check_shards() below
};

class Dataset {
 public:
  // Throws, naming the path, when the directory, its manifest, the split, its
  // index or a shard is missing, or when the index or a shard disagrees with
  // the manifest (sizes always; checksums on request).
  Dataset(const std::filesystem::path& dir, const std::string& split,
          const DatasetOptions& options = {});

  const Manifest& manifest() const { return manifest_; }
  const std::string& split() const { return split_; }
  int64_t size() const { return index_.size(); }
  const LengthTable& lengths() const { return index_; }
  const LabelSet& labels() const { return labels_; }  // classification; empty for seq2seq

  // Throws, naming the shard file and the example, on a bad token id.
  Example get(int64_t index) const;

  // Every shard there and saying what the manifest says of it (its
  // attributes: no per-example arrays are read), and with verify_checksums
  // every file read whole against its sha256. Throws naming the file.
  void check_shards() const;

 private:
  const ShardReader& open(size_t shard) const;  // from the cache, or opened; mutex held

  std::filesystem::path dir_;
  Manifest manifest_;
  LabelSet labels_;
  std::string split_;
  DatasetOptions options_;
  const SplitEntry& entry_;  // manifest_'s
  SplitIndex index_;

  mutable std::mutex mutex_;
  mutable std::list<std::pair<size_t, std::unique_ptr<ShardReader>>> open_;  // most recent first
};

}  // namespace data
