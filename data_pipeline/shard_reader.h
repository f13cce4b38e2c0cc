// Reads one HDF5 shard (format in shard_format.h), lazily:
//
//   ShardReader reader(file);               // opens it, checks the format attributes
//   ShardIndex index = reader.read_index(); // offsets, ids, labels (validated), kept in memory
//   Example e = reader.read_example(index.location(i), i);  // example i: two hyperslab reads
//   ShardData all = reader.read();          // everything (tools, tests)
//
// Reads format versions 1 (unchecked) and 2 (Fletcher-32 checksums on every
// dataset, required: a version 2 shard without them is refused). Every error
// names the file; errors about examples also name their indices (in the
// shard) and, for one example, its id. A chunk that fails its checksum is an
// error naming the dataset and the examples in it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "data_pipeline/example.h"
#include "data_pipeline/hdf5_util.h"
#include "data_pipeline/shard_format.h"

namespace data {

// Where one example lies in its shard: its token ranges, id and label.
struct ExampleLocation {
  int64_t src_offset = 0, src_length = 0;  // /src/tokens[src_offset : src_offset + src_length]
  int64_t tgt_offset = 0, tgt_length = 0;  // /tgt/tokens likewise
  int64_t id = 0;
  int64_t label = -1;  // class id (classification); -1 for seq2seq
};

// A shard's offsets, ids and labels: 24 bytes per example (32 with labels).
struct ShardIndex {
  std::vector<int64_t> src_offsets;  // [n + 1]
  std::vector<int64_t> tgt_offsets;  // [n + 1]
  std::vector<int64_t> ids;          // [n]
  std::vector<int64_t> labels;       // [n] classification shards; empty for seq2seq
  int64_t size() const { return static_cast<int64_t>(ids.size()); }
  ExampleLocation location(int64_t i) const;  // example i (0-based in the shard)
};

class ShardReader {
 public:
  explicit ShardReader(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }
  int64_t format_version() const { return format_version_; }
  int64_t num_examples() const { return num_examples_; }
  const ShardAttrs& attrs() const { return attrs_; }
  int64_t num_tokens(bool src) const { return (src ? src_tokens_ : tgt_tokens_)->size(); }

  // Offsets, ids and labels. Throws if their sizes disagree with num_examples,
  // offsets do not run monotonically from 0 to the token count, or a label
  // is outside [0, num_labels).
  ShardIndex read_index() const;
  // Example i (0-based in this shard), which lies at `where`. Throws, naming
  // i and its id, if a token id is outside the vocabulary or a range outside
  // the token arrays.
  Example read_example(const ExampleLocation& where, int64_t i) const;
  // All arrays, every token checked.
  ShardData read() const;

 private:
  std::filesystem::path file_;
  h5::Handle handle_;
  int64_t format_version_ = 0;
  int64_t num_examples_ = 0;
  ShardAttrs attrs_;
  std::optional<h5::Vector<int32_t>> src_tokens_, tgt_tokens_;
};

}  // namespace data
