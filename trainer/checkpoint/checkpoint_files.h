// A checkpoint's files as its SHA256SUMS lists them (checkpoint.h), each read
// once and checked as it is read: what a resume loads is the bytes it
// verified — one read of the file system, not a pass for the checksums and a
// second one for the load.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace checkpoint {

// A checkpoint that fails verification: SHA256SUMS missing, or not listing
// what the directory holds, or a file missing or not matching its entry.
class Unverified : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CheckpointFiles {
 public:
  // Reads <dir>/SHA256SUMS and checks that it lists model.pt, state.json and
  // the optimizer files the directory holds (optimizer.pt, or every part of
  // one rank count), each of them present; else throws Unverified.
  explicit CheckpointFiles(std::string dir);

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const;                    // <dir>/<name>
  const std::vector<std::string>& listed() const { return listed_; }  // SHA256SUMS's order
  const std::vector<std::string>& optimizer_files() const { return optimizer_; }

  // The file's bytes, checked against its entry; else throws Unverified
  // naming it (also when it cannot be read).
  std::vector<char> read(const std::string& name) const;
  // The same check without keeping the bytes (read in pieces).
  void check(const std::string& name) const;
  // check() of every listed file that a load does not read (all but
  // state.json, model.pt and the optimizer files): none in the checkpoints
  // this program writes, but a listed file is a checked one.
  void check_unloaded() const;

 private:
  void read_listing();
  // Its hash, the file taken as checked; throws if unlisted.
  const std::string& entry(const std::string& name) const;

  std::string dir_;
  std::map<std::string, std::string> sums_;  // file -> SHA-256 (hex)
  std::vector<std::string> listed_;
  std::vector<std::string> optimizer_;
};

}  // namespace checkpoint
