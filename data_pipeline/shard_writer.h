// Writes one HDF5 shard (format in shard_format.h, the current version:
// every dataset chunked, with Fletcher-32 checksums).
//
// The file appears atomically: it is written as "{file}.tmp" and renamed, so
// a reader never sees half a shard and a crash leaves at most a .tmp behind.
#pragma once
#include <cstdint>
#include <filesystem>

#include "data_pipeline/shard_format.h"

namespace data {

struct ShardWriteOptions {
  int64_t deflate = 0;               // gzip level of the token arrays, 0 (off) .. 9
  int64_t chunk = int64_t{1} << 12;  // elements per chunk (16 KiB of int32 tokens)
};

// Throws std::runtime_error naming `file` on failure (and removes the .tmp).
void write_shard(const std::filesystem::path& file, const ShardData& data, const ShardAttrs& attrs,
                 const ShardWriteOptions& options = {});

}  // namespace data
