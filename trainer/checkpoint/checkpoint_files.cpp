#include "trainer/checkpoint/checkpoint_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data_pipeline/sha256.h"
#include "trainer/checkpoint/optimizer_state.h"

namespace checkpoint {

namespace fs = std::filesystem;

CheckpointFiles::CheckpointFiles(std::string dir) : dir_(std::move(dir)) {
  try {
    read_listing();
  } catch (const std::filesystem::filesystem_error& e) {  // pruned while read, say
    throw Unverified(e.what());
  }
}

void CheckpointFiles::read_listing() {
  std::ifstream sums(path("SHA256SUMS"));
  if (!sums) throw Unverified(path("SHA256SUMS") + " is missing");
  std::string hash, file;
  while (sums >> hash >> file) {
    if (!fs::exists(path(file))) throw Unverified(path(file) + " is missing");
    if (!fs::is_regular_file(path(file))) throw Unverified(path(file) + " is not a file");
    if (!sums_.emplace(file, hash).second)
      throw Unverified(path("SHA256SUMS") + " lists " + file + " twice");
    listed_.push_back(file);
  }
  // Each file a checkpoint needs is listed (a file unlisted is unchecked).
  for (const char* needed : {"model.pt", "state.json"})
    if (sums_.count(needed) == 0) throw Unverified(path("SHA256SUMS") + " does not list " + needed);
  try {
    optimizer_ = checkpoint::optimizer_files(listed_);
  } catch (const std::exception& e) {
    throw Unverified(path("SHA256SUMS") + " lists " + e.what());
  }
  // Loading reads the optimizer files there are: they must be the ones listed.
  std::vector<std::string> present;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir_, error))
    present.push_back(entry.path().filename().string());
  if (error) throw Unverified("cannot list " + dir_ + ": " + error.message());
  std::vector<std::string> held;
  try {
    held = checkpoint::optimizer_files(present);
  } catch (const std::exception& e) {
    throw Unverified(dir_ + " holds " + e.what());
  }
  if (held != optimizer_)
    throw Unverified(dir_ + " holds optimizer files that SHA256SUMS does not list");
}

std::string CheckpointFiles::path(const std::string& name) const {
  return (fs::path(dir_) / name).string();
}

const std::string& CheckpointFiles::entry(const std::string& name) const {
  const auto it = sums_.find(name);
  if (it == sums_.end()) throw Unverified(path("SHA256SUMS") + " does not list " + name);
  return it->second;
}

void CheckpointFiles::check_unloaded() const {
  for (const auto& name : listed_)
    if (name != "state.json" && name != "model.pt" &&
        std::count(optimizer_.begin(), optimizer_.end(), name) == 0)
      check(name);
}

std::vector<char> CheckpointFiles::read(const std::string& name) const {
  const std::string& hash = entry(name);
  std::ifstream in(path(name), std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (size < 0) throw Unverified("cannot read " + path(name));
  std::vector<char> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw Unverified("cannot read " + path(name));
  data::Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  if (sha.hex() != hash) throw Unverified(path(name) + " does not match its SHA256SUMS entry");
  return bytes;
}

void CheckpointFiles::check(const std::string& name) const {
  const std::string& hash = entry(name);
  std::string actual;
  try {
    actual = data::sha256_file(path(name));
  } catch (const std::exception& e) {  // cannot open or read it
    throw Unverified(e.what());
  }
  if (actual != hash) throw Unverified(path(name) + " does not match its SHA256SUMS entry");
}

}  // namespace checkpoint
