// Which weights to evaluate: one checkpoint, or the element-wise mean of the
// last N (the paper averages the last 5 checkpoints for base models and the
// last 20 for big ones, section 6.1).
//
//   select_checkpoints(run, latest, 5)  -> the 5 newest checkpoints, oldest first
//   select_checkpoints(run, best, 1)    -> the best by validation loss
//   select_checkpoints(run, runs/x/checkpoints/step_00004000, 3)
//                                        -> steps 2000, 3000, 4000 (if they exist)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "launch/ranks.h"
#include "trainer/checkpoint/checkpoint_choice.h"
#include "trainer/checkpoint/checkpoint_files.h"

namespace eval {

// `which` is latest, best or a checkpoint directory; the N checkpoints of
// the run ending at it, oldest first. Errors name what is missing, e.g.
// fewer than N checkpoints up to `which`.
std::vector<std::string> select_checkpoints(const std::string& run_dir,
                                            const checkpoint::CheckpointChoice& which,
                                            int64_t average_last);

// Collective: select_checkpoints on rank 0 alone, its answer (or its error)
// on every rank: one reader of the run's listing for the whole job, and a run
// still in training may prune between two ranks' looks, while all must score
// the same weights.
std::vector<std::string> select_checkpoints(const std::string& run_dir,
                                            const checkpoint::CheckpointChoice& which,
                                            int64_t average_last, const launch::Ranks& ranks);

// The error for a checkpoint that a run still in training pruned while it
// was read (rename-then-delete, checkpoint.h: gone, never half there).
std::string removed_while_read(const std::string& checkpoint_dir);
// Throws that error for the first of `checkpoints` that is gone.
void throw_if_removed(const std::vector<std::string>& checkpoints);

// Runs `read`, which reads files of `checkpoints`; its failure is said as
// removed_while_read where one of them is gone, else as "checkpoint fails
// verification: ..." (checkpoint::Unverified) where a file does not match.
template <typename Read>
void reading(const std::vector<std::string>& checkpoints, Read&& read) {
  try {
    read();
  } catch (const checkpoint::Unverified& e) {
    throw_if_removed(checkpoints);
    throw checkpoint::Unverified(std::string("checkpoint fails verification: ") + e.what());
  } catch (const std::exception&) {
    throw_if_removed(checkpoints);
    throw;
  }
}

// Loads the model weights of `checkpoints` into `model`: the one as is, or
// their mean (accumulated in float64). Each model.pt is read once and checked
// against its SHA256SUMS entry as it is read (checkpoint::Unverified, "checkpoint
// fails verification: ..."; the optimizer's files, which evaluation does not
// read, are not checked), and names and shapes are checked for every file
// (checkpoint/state_dict.h). A checkpoint pruned meanwhile: removed_while_read.
void load_averaged(torch::nn::Module& model, const std::vector<std::string>& checkpoints);

}  // namespace eval
