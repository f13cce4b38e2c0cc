// What makes two dataset directories the same dataset: their content, not
// how they were made.
//
//   content_sha256(dir, manifest)   SHA-256 of everything training reads:
//       the task, the vocabulary sizes, special ids and number of labels;
//       the bytes of the tokenizer and label files; and, split by split (in
//       name order), every example in order: its id, source tokens, target
//       tokens and label. Shard files, their boundaries and their number,
//       the rank count, the command line and the deflate level do not enter:
//       `mpirun -np 1` and `-np 8` of one prepare_data command give one
//       value. prepare_data stores it as the manifest's "content_sha256".
//   dataset_id(dir)                 what a run records of its dataset (state.json)
//       and resume compares: content_sha256, or for a dataset prepared
//       before it existed, the sha256 of its manifest.json (as it was before
//       `prepare_data --upgrade` rewrote it, if it did).
//   names_manifest(dir, id)         whether a checkpoint's id names the
//       dataset by its manifest's sha256 (checkpoints from before content
//       ids): the manifest now, or before an upgrade.
//
// Integers enter as little-endian bytes (the shards' own order on every
// host this builds for), each sequence preceded by its length.
#pragma once
#include <filesystem>
#include <string>

#include "data_pipeline/manifest.h"

namespace data {

// Reads every shard once (rank 0 of prepare_data, after writing them).
std::string content_sha256(const std::filesystem::path& dir, const Manifest& manifest);

std::string dataset_id(const std::filesystem::path& dir);

bool names_manifest(const std::filesystem::path& dir, const std::string& id);

}  // namespace data
