#include "data_pipeline/prepare/upgrade.h"

#include "data_pipeline/manifest.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/split_index.h"

namespace data {

std::vector<std::string> upgrade_dataset(const std::filesystem::path& dir) {
  Manifest manifest = read_manifest(dir);
  std::vector<std::string> indexed;
  for (auto& [split, entry] : manifest.splits) {
    const auto file = dir / entry.index.file;
    if (!entry.index.file.empty() && std::filesystem::is_regular_file(file) &&
        sha256_file(file) == entry.index.sha256)
      continue;
    entry.index = write_split_index(dir, split, entry);
    indexed.push_back(split);
  }
  if (indexed.empty()) return indexed;
  // Runs named a dataset without content_sha256 by its manifest's bytes, which change here.
  if (manifest.content_sha256.empty() && manifest.manifest_sha256_before_upgrade.empty())
    manifest.manifest_sha256_before_upgrade = sha256_file(dir / kManifestFile);
  write_manifest(dir, manifest);
  return indexed;
}

}  // namespace data
