// Reads one HDF5 shard (format in shard_format.h).
//
// The constructor opens the file and checks its format attributes; read()
// loads and validates every array. Errors name the file. A later version
// adds hyperslab reads of example ranges for lazy loading; the open file
// handle is kept for that.
#pragma once
#include <cstdint>
#include <filesystem>

#include "data_pipeline/hdf5_util.h"
#include "data_pipeline/shard_format.h"

namespace data {

class ShardReader {
 public:
  explicit ShardReader(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }
  int64_t num_examples() const { return num_examples_; }
  const ShardAttrs& attrs() const { return attrs_; }

  // All arrays. Throws if offsets, ids or token ids are inconsistent.
  ShardData read() const;

 private:
  std::filesystem::path file_;
  h5::Handle handle_;
  int64_t num_examples_ = 0;
  ShardAttrs attrs_;
};

}  // namespace data
