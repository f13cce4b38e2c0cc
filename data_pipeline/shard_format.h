// The HDF5 shard: one file holding a contiguous slice of one split.
//
// File {split}-{NNNNN}.h5 (e.g. train-00003.h5), readable with h5py/h5dump:
//
//   /               attrs (scalars): format = "transformer-shard" (UTF-8
//                   string), format_version = 2, num_examples, src_vocab_size,
//                   tgt_vocab_size, pad_id, bos_id, eos_id, unk_id (int64)
//   /src/tokens     int32 [total source tokens] (+ optional deflate)
//   /src/offsets    int64 [num_examples + 1]; example i is
//                   tokens[offsets[i] : offsets[i + 1]], offsets[0] = 0
//   /tgt/tokens     int32, as /src/tokens
//   /tgt/offsets    int64, as /src/offsets
//   /ids            int64 [num_examples]: the example's index in its split
//                   (its line number in the text files, from 0)
//
// Classification shards add
//
//   /               attr num_labels (int64): the number of classes
//   /labels         int64 [num_examples]: each example's class id, in
//                   [0, num_labels) (names in the dataset's labels.txt)
//
// and keep /tgt with no tokens (offsets all 0). A shard without num_labels
// is a seq2seq shard, as every shard written before classification was.
//
// Integrity (format_version 2): every dataset is chunked and each chunk
// carries a Fletcher-32 checksum of its bytes on disk (after deflate), which
// HDF5 verifies whenever it reads the chunk: a damaged chunk fails its read
// instead of returning garbage. The file is in HDF5's 1.10 format, whose
// metadata (superblock, object headers, chunk indexes) is checksummed too.
// Version 1 shards (written before: only the token arrays chunked, no
// checksums, HDF5's oldest format) still read, unchecked.
//
// Sequences are stored bare: no bos and no eos on either side. The batcher
// and collate() add them (src + eos; bos + tgt; tgt + eos), so changing that
// convention never needs the data to be prepared again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data_pipeline/special_ids.h"

namespace data {

inline constexpr char kShardFormat[] = "transformer-shard";
inline constexpr int64_t kShardFormatVersion = 2;        // what write_shard writes
inline constexpr int64_t kOldestShardFormatVersion = 1;  // the oldest ShardReader reads

// Variable-length sequences packed end to end (one side of a shard).
struct RaggedTokens {
  std::vector<int32_t> tokens;         // [total tokens]
  std::vector<int64_t> offsets = {0};  // [n + 1]

  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  std::vector<int32_t> at(int64_t i) const {
    return {tokens.begin() + offsets[i], tokens.begin() + offsets[i + 1]};
  }
  void append(const std::vector<int32_t>& sequence) {
    tokens.insert(tokens.end(), sequence.begin(), sequence.end());
    offsets.push_back(static_cast<int64_t>(tokens.size()));
  }
};

// The arrays of one shard; src, tgt, ids (and labels) all hold the same n examples.
struct ShardData {
  RaggedTokens src;
  RaggedTokens tgt;
  std::vector<int64_t> ids;     // [n]
  std::vector<int64_t> labels;  // [n] class ids (classification); empty for seq2seq

  int64_t size() const { return static_cast<int64_t>(ids.size()); }
};

// The root attributes besides format, format_version and num_examples.
struct ShardAttrs {
  int64_t src_vocab_size = 0;
  int64_t tgt_vocab_size = 0;
  SpecialIds special;
  int64_t num_labels = 0;  // classes of a classification shard; 0 = seq2seq (no /labels)
};

// "train", 3 -> "train-00003.h5"
std::string shard_file_name(const std::string& split, int64_t index);

}  // namespace data
