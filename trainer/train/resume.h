// Resuming a run: which checkpoint to start from, and whether it fits.
//
//   --resume latest  the newest checkpoint of the run that verifies against its
//                    SHA256SUMS (as it is read); one that fails is reported and skipped; none
//                    at all: a fresh start ("auto", its former name, is the same)
//   --resume best    the run's best checkpoint (by validation loss), which must verify
//   --resume <dir>   that checkpoint, which must verify
//   --resume none    a fresh start
// (latest, best and a directory are evaluate's --checkpoint words too.)
//
// A checkpoint fits when its model section equals this run's (else an error
// naming the first differing field) and it was trained on this dataset (the
// same data::dataset_id: its content, whatever the rank count that prepared
// it). Changed optimizer or data settings are allowed with a warning each;
// world size and accumulation may change freely (the cursor counts global
// batches, docs/DESIGN.md).
//
// Rank 0 alone reads the checkpoint; the other ranks receive what it read
// (share_adam_state here, the weights by broadcast_parameters): a thousand
// ranks resuming cost the shared file system one reader, not a thousand.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/distributed/communicator.h"

namespace train {

// Loads the checkpoint to resume from with `load`, which reads it through
// CheckpointFiles (so that what it loads is what it verified, each file read
// once) and throws checkpoint::Unverified before it changes anything when a
// file fails. --resume latest: the newest checkpoint that verifies, each one
// that fails reported and skipped, none at all a fresh start; best or a
// directory: that one, which must verify. Returns the directory loaded, ""
// for a fresh start.
std::string resume_from(const checkpoint::Checkpoints& checkpoints,
                        const checkpoint::CheckpointChoice& resume,
                        const std::function<void(const checkpoint::CheckpointFiles&)>& load);

// saved_state: checkpoint_dir's state.json; current_toml: this run's resolved
// config. The refusal names the checkpoint and the ways on.
void check_resume_compatible(const std::string& checkpoint_dir, const nlohmann::json& saved_state,
                             const std::string& current_toml, const std::string& dataset_id);

// Collective. Rank 0's Adam state over `params` (those `adam` steps, in the
// same order on every rank) on every rank: each parameter's step count, and
// its moments where it has them, broadcast on the parameters' device.
void share_adam_state(torch::optim::Adam& adam, const std::vector<torch::Tensor>& params,
                      distributed::Communicator& comm);

}  // namespace train
