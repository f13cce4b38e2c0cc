// Resuming a run: which checkpoint to start from, and whether it fits.
//
//   --resume auto    the newest checkpoint of the run that verifies against its
//                    SHA256SUMS; one that fails is reported and skipped; none
//                    at all: a fresh start
//   --resume <dir>   that checkpoint, which must verify
//   --resume none    a fresh start
//
// A checkpoint fits when its model section equals this run's (else an error
// naming the first differing field) and it was trained on this dataset (same
// manifest hash). Changed optimizer or data settings are allowed with a
// warning each; world size and accumulation may change freely (the cursor
// counts global batches, docs/DESIGN.md).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "trainer/checkpoint/checkpoint.h"

namespace train {

// The checkpoint directory to resume from, "" for a fresh start.
std::string choose_checkpoint(const checkpoint::Checkpoints& checkpoints,
                              const std::string& resume);

// saved_state: the checkpoint's state.json; current_toml: this run's resolved config.
void check_resume_compatible(const nlohmann::json& saved_state, const std::string& current_toml,
                             const std::string& dataset_manifest_sha256);

}  // namespace train
