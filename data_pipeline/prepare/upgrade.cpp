#include "data_pipeline/prepare/upgrade.h"

#include <memory>
#include <stdexcept>

#include "data_pipeline/manifest.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/split_index.h"
#include "base/holder_lock.h"

namespace data {

namespace {

// Whether the split's index is there, opens as its own and is the file the
// manifest names. An index the upgrade may rebuild (split_index.h's
// RebuildableIndex: damaged, format 1, another split's or dataset's) is not;
// any other refusal (the manifest's shards changed by hand, an index of a
// later prepare_data, a file that cannot be read) ends the upgrade, naming it.
bool index_current(const std::filesystem::path& dir, const std::string& split,
                   const SplitEntry& entry) {
  if (entry.index.file.empty() || !std::filesystem::is_regular_file(dir / entry.index.file))
    return false;
  try {
    const SplitIndex opened(dir, split, entry);
  } catch (const RebuildableIndex&) {
    return false;
  }
  return sha256_file(dir / entry.index.file) == entry.index.sha256;
}

// The splits whose index is missing, damaged, of an earlier prepare_data or
// of another split or dataset.
std::vector<std::string> needing_an_index(const std::filesystem::path& dir,
                                          const Manifest& manifest) {
  std::vector<std::string> splits;
  for (const auto& [split, entry] : manifest.splits)
    if (!index_current(dir, split, entry)) splits.push_back(split);
  return splits;
}

}  // namespace

std::vector<std::string> upgrade_dataset(const std::filesystem::path& dir) {
  // Up to date: said without the lock below, so that a dataset its reader
  // cannot write (a colleague's, a read-only mount) is checked too.
  if (needing_an_index(dir, read_manifest(dir)).empty()) return {};
  // One upgrade of a dataset at a time: two write the same temporary index
  // files and rename them from under each other (the loser failing on a
  // rename, the manifest left naming another index's digest). The second is
  // refused naming the first; the lock goes with its holder, as a run's does.
  const auto lock_file = dir / ".upgrade.lock";
  std::unique_ptr<base::HolderLock> lock;
  try {
    lock = std::make_unique<base::HolderLock>(
        lock_file.string(), "a second --upgrade of this dataset at once would not be detected");
  } catch (const base::HolderLock::Held& held) {
    throw std::runtime_error("dataset " + dir.string() +
                             " is being upgraded by another prepare_data --upgrade (" +
                             held.holder + ", holding " + lock_file.string() +
                             "): let it end; it leaves the dataset upgraded");
  }
  Manifest manifest = read_manifest(dir);  // after the lock: what an upgrade before left
  const std::vector<std::string> indexed = needing_an_index(dir, manifest);
  if (indexed.empty()) return indexed;
  for (const auto& split : indexed) {
    SplitEntry& entry = manifest.splits.at(split);
    entry.index = write_split_index(dir, split, entry);
  }
  // Runs named a dataset without content_sha256 by its manifest's bytes, which change here.
  if (manifest.content_sha256.empty() && manifest.manifest_sha256_before_upgrade.empty())
    manifest.manifest_sha256_before_upgrade = sha256_file(dir / kManifestFile);
  write_manifest(dir, manifest);
  return indexed;
}

}  // namespace data
