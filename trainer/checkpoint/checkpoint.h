// Checkpoints: one directory per save, written atomically.
//
//   <run>/checkpoints/step_00012000/
//       model.pt       weights, a state dict Python's torch.load reads
//       optimizer.pt   Adam moments and step counts, a state dict too (optimizer_state.h)
//       state.json     step, epoch, data cursor, world size, config, dataset
//                      hash, validation history, the open log interval
//       SHA256SUMS     `sha256sum -c` checks the three files above
//   <run>/checkpoints/latest -> step_00012000   (updated last)
//   <run>/checkpoints/best   -> the best by validation loss (never pruned)
//
// The directory is written under a temporary name (".tmp-..."), every file
// fsynced, then renamed; a crash or a failed write leaves either the old
// checkpoints or the new one, never a half-written one that `latest` points
// to. Dot-named leftovers of a crash are removed by remove_temporaries().
// No random-generator state is saved: dropout masks derive from (seed, step,
// micro-batch) and data order from (seed, epoch).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/snapshot.h"

namespace checkpoint {

class Checkpoints {
 public:
  explicit Checkpoints(std::string run_dir, int64_t keep_last = 5);

  // Writes step_<snapshot.step>, moves `latest` to it, removes all but the
  // newest keep_last (and the best). A failure throws naming the step and
  // directory. Safe beside training: it reads only the snapshot.
  std::string save(const Snapshot& snapshot) const;

  void mark_best(const std::string& checkpoint_dir) const;
  void remove_temporaries() const;

  // Before training from `step` (-1: a fresh start): the checkpoints of later
  // steps belong to a history this run abandons. They are moved, not deleted,
  // to <run>/superseded/<UTC time>/, so that pruning, `latest` and a requeued
  // job's --resume latest see this run's history only; `latest` then points
  // to `step` (none for a fresh start) and a `best` among them is unmarked.
  // Returns the directory they went to, "" when there were none.
  std::string set_aside_after(int64_t step) const;

  // "latest", "best" or a checkpoint directory path -> that directory; throws
  // naming what was looked for when there is none.
  std::string resolve(const std::string& which) const;

  std::string path_of(int64_t step) const;  // <dir>/step_<step>, canonical

  // Complete checkpoint directories (canonical paths), oldest first.
  std::vector<std::string> list() const;

  const std::string& dir() const { return dir_; }

 private:
  void point_link(const std::string& name, const std::filesystem::path& target) const;
  void remove_checkpoint(const std::filesystem::path& checkpoint_dir) const;
  static void remove_leftover(const std::filesystem::path& dir);  // best effort, warns
  std::string resolve_link(const std::string& name) const;

  std::string dir_;  // <run>/checkpoints
  int64_t keep_last_;
};

// True when SHA256SUMS matches every file; otherwise false and *why says what failed.
bool verify_checkpoint(const std::string& checkpoint_dir, std::string* why);

nlohmann::json read_checkpoint_state(const std::string& checkpoint_dir);

}  // namespace checkpoint
