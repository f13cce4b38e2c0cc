// Checkpoints: one directory per save, written atomically.
//
//   <run>/checkpoints/step_00012000/
//       model.pt       weights, a state dict Python's torch.load reads
//       optimizer.pt   Adam moments and step counts, a state dict too, or one
//                      part per rank when the ranks hold shards of them
//                      (optimizer-00000-of-00004.pt ...: optimizer_state.h)
//       state.json     step, epoch, data cursor, world size, config, dataset
//                      hash, validation history, the open log interval
//       SHA256SUMS     `sha256sum -c` checks the files above
//   <run>/checkpoints/latest -> step_00012000   (updated last)
//   <run>/checkpoints/best   -> the best by validation loss (never pruned)
//
// The directory is written under a temporary name (".tmp-step_...-<pid>-<n>"), every
// file fsynced, then renamed; a crash or a failed write leaves either the old
// checkpoints or the new one, never a half-written one that `latest` points
// to. Several ranks write into the temporary directory, each its own files;
// rank 0 commits it (SHA256SUMS, rename, `latest`) once all are written
// (background_save.h). Dot-named leftovers of a crash are removed by
// remove_temporaries(), which the trainer calls before any rank writes.
// No random-generator state is saved: dropout masks derive from (seed, step,
// micro-batch) and data order from (seed, epoch).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/checkpoint_choice.h"
#include "trainer/checkpoint/snapshot.h"

namespace checkpoint {

class Checkpoints {
 public:
  explicit Checkpoints(std::string run_dir, int64_t keep_last = 5);

  // Writes step_<snapshot.step>, moves `latest` to it, removes all but the
  // newest keep_last (and the best): the three steps below in one process.
  // A failure throws naming the step and directory. Safe beside training:
  // it reads only the snapshot.
  std::string save(const Snapshot& snapshot) const;

  // A save that several ranks write: rank 0 begins it (a new temporary
  // directory for the step, of a name no other save uses: returned), then
  // every rank writes its part of the snapshot there (its files fsynced;
  // returned: their SHA256SUMS lines), then rank 0 commits the lines of all
  // (SHA256SUMS, rename, `latest`, pruning; returned: the directory) or
  // abandons the temporary directory.
  std::string begin_save(int64_t step) const;
  std::string write_part(const Snapshot& snapshot, const std::string& tmp) const;
  // `best`: the step is the new best by validation, marked before pruning,
  // so that the best it replaces goes now (keep_last counts it no more).
  std::string commit(int64_t step, const std::string& tmp, const std::string& sums,
                     bool best = false) const;
  void abandon(const std::string& tmp) const;

  void mark_best(const std::string& checkpoint_dir) const;
  void remove_temporaries() const;

  // Before training from `step` (-1: a fresh start): the checkpoints of later
  // steps belong to a history this run abandons. They are moved, not deleted,
  // to <run>/superseded/<UTC time>/, so that pruning, `latest` and a requeued
  // job's --resume latest see this run's history only; `latest` then points
  // to `step` (none for a fresh start) and a `best` among them is unmarked.
  // Returns the directory they went to, "" when there were none.
  std::string set_aside_after(int64_t step) const;

  // latest, best or a checkpoint directory -> that directory; throws naming
  // what was looked for when there is none (none: std::logic_error).
  std::string resolve(const CheckpointChoice& which) const;

  std::string path_of(int64_t step) const;  // <dir>/step_<step>, canonical
  int64_t latest_step() const;              // the step `latest` names; -1: none

  // Complete checkpoint directories (canonical paths), oldest first.
  std::vector<std::string> list() const;

  const std::string& dir() const { return dir_; }

 private:
  // Runs `body`; its failure becomes one naming the step and the directory.
  template <typename Body>
  auto naming_the_save(int64_t step, Body&& body) const;
  void point_link(const std::string& name, const std::filesystem::path& target) const;
  void remove_checkpoint(const std::filesystem::path& checkpoint_dir) const;
  static void remove_leftover(const std::filesystem::path& dir);  // best effort, warns
  std::string resolve_link(const std::string& name) const;

  std::string dir_;  // <run>/checkpoints
  int64_t keep_last_;
};

// A state.json's bytes (CheckpointFiles::read); errors name `path`.
nlohmann::json parse_checkpoint_state(const std::vector<char>& bytes, const std::string& path);

}  // namespace checkpoint
