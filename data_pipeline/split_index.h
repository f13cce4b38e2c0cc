// {split}.index: where every example of a split lies in its shards, in one
// file of fixed-size records that a rank reads a record at a time (pread)
// instead of holding: the page cache keeps one copy per node for all its
// ranks, a rank's memory does not grow with the corpus, and opening a split
// reads a header, not every shard's offsets.
//
// prepare_data writes it beside the shards and names it in the manifest
// (with its sha256); `prepare_data --upgrade DIR` writes it for a dataset
// prepared before. Little-endian, as the shards:
//
//   header       128 bytes: magic "transformer-idx" (16 bytes, NUL-padded),
//                format_version (int64) = 2, num_examples, num_shards
//                (int64), the split's name (64 bytes, NUL-padded), 24 bytes
//                of zeros
//   shard_begin  int64 [num_shards + 1]: the first example of each shard
//                (the split's numbering), then num_examples
//   shard_sha256 32 bytes [num_shards]: the SHA-256 of each shard the index
//                was built from (the manifest's, as bytes)
//   lengths      {int32 src, tgt} [num_examples]: bare token counts (what
//                batching scans; 8 bytes an example)
//   locations    {int64 src_offset, tgt_offset, id, label; int32
//                src_length, tgt_length; uint32 crc32; int32 zero}
//                [num_examples]: example i's place in its shard's token
//                arrays, its id and label (-1 for seq2seq), and the CRC-32
//                (zlib's) of the record's first 40 bytes (what reading an
//                example needs; 48 bytes)
//
// Opening an index proves it belongs where it lies, from its header and the
// manifest alone (no shard read): its split's name, and each shard's
// SHA-256 and example count as the manifest gives them — an index of another
// split (valid.index and test.index swapped) or of another dataset of the
// same size is refused naming the split or the shard, and a shard added to a
// manifest by hand is named as one the index was not built from. Version 1
// (no name, no digests) is refused naming `prepare_data --upgrade`, which
// rebuilds it.
//
// Reading a location checks its CRC-32 and that its lengths are the lengths
// array's, so a damaged record is an error naming the file and the example,
// as a damaged shard chunk is (the shards' Fletcher-32) — before an example
// batched by a wrong length reaches a batch. A length damaged so that its
// example is skipped as too long is never read back: only
// data.verify_checksums (the whole file's sha256 against the manifest's)
// finds that.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_pipeline/length_table.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/shard_reader.h"

namespace data {

inline constexpr int64_t kSplitIndexVersion = 2;

// An index that `prepare_data --upgrade` rebuilds from the shards the manifest
// names: cut short or damaged, of format 1, another split's or another
// dataset's. The other refusals (the manifest's shards are not those the
// index was built from: a shard added, removed or moved by hand) it leaves
// to the user, since rebuilding would make the index agree with a manifest
// whose content_sha256 no longer describes it.
struct RebuildableIndex : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "train" -> "train.index"
std::string split_index_file_name(const std::string& split);

// Writes dir/{split}.index from the split's shards (manifest order, one shard
// in memory at a time) and returns its manifest entry.
IndexEntry write_split_index(const std::filesystem::path& dir, const std::string& split,
                             const SplitEntry& entry);

class SplitIndex : public LengthTable {
 public:
  // Opens dir / entry.index.file and checks its header, shard boundaries and
  // size against the manifest's entry. Throws naming the file; for a split
  // without an index, naming the command that writes it.
  SplitIndex(const std::filesystem::path& dir, const std::string& split, const SplitEntry& entry);
  ~SplitIndex() override;
  SplitIndex(const SplitIndex&) = delete;
  SplitIndex& operator=(const SplitIndex&) = delete;

  const std::filesystem::path& file() const { return file_; }
  int64_t size() const override { return num_examples_; }
  Lengths at(int64_t index) const override;
  void read(int64_t begin, std::vector<Lengths>& out) const override;

  int64_t num_shards() const { return static_cast<int64_t>(shard_begin_.size()) - 1; }
  int64_t shard_of(int64_t index) const;  // the shard holding example `index`
  int64_t shard_begin(int64_t shard) const { return shard_begin_.at(shard); }  // its first example
  ExampleLocation location(int64_t index) const;

 private:
  void read_at(int64_t offset, void* out, size_t bytes) const;  // pread, whole or throws
  // The manifest's shards are those the index (of these sizes) was built from.
  void check_shards(int64_t index_shards, int64_t index_examples, const SplitEntry& entry);
  void check_index(int64_t index) const;
  [[noreturn]] void damaged(int64_t index, const std::string& what) const;  // names the upgrade

  std::filesystem::path file_;
  int fd_ = -1;
  int64_t num_examples_ = 0;
  std::vector<int64_t> shard_begin_;           // [shards + 1]
  int64_t lengths_at_ = 0, locations_at_ = 0;  // byte offsets of the two arrays
};

}  // namespace data
