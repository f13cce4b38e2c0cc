// Brings a dataset prepared by an earlier prepare_data up to what this build
// reads, in place: each split without an index (split_index.h), or whose
// index is missing, differs from the manifest's sha256, or is one the index
// itself calls rebuildable (damaged, format 1, another split's or dataset's),
// gets one built from its shards, and the manifest names it. An index that
// disagrees with the manifest's shards (a shard added, removed or moved by
// hand) is refused, naming the shard: rebuilding it would hide the change. Nothing else changes
// (the shards, their checksums and content_sha256 stay; a dataset without
// content_sha256 keeps its manifest's sha256 from before the upgrade as its
// id, dataset_identity.h), so runs and checkpoints that name the dataset
// keep naming it.
//
//   prepare_data --upgrade data/de-en
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace data {

// Returns the splits it indexed (none when the dataset was up to date).
// Opens every index the manifest names and reads it once, for its sha256.
// The manifest is replaced atomically after every index is written: a
// failure leaves the dataset as it was. Throws naming the file at fault, or
// naming the holder when another upgrade of the dataset is under way
// (<dir>/.upgrade.lock, base/holder_lock.h).
std::vector<std::string> upgrade_dataset(const std::filesystem::path& dir);

}  // namespace data
