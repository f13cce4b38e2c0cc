// A checkpoint's content, copied off the live tensors at a step boundary so
// that training can go on changing them while the copy is written
// (background_save.h). Taking it is what a save costs the training: a copy
// of the weights and Adam's moments (a rank's shard of them, when sharded)
// into host memory, not the writing, checksumming and fsyncing of the files.
#pragma once
#include <cstdint>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"

namespace checkpoint {

// What one rank writes of a checkpoint: rank 0 the model and state.json,
// every rank its optimizer file, where it has one (optimizer_state.h).
struct CheckpointPart {
  NamedTensors model;       // model.pt: parameters and buffers (state_dict.h); empty: none
  OptimizerFile optimizer;  // optimizer.pt or this rank's part; no name: none
  nlohmann::json state;     // state.json; null: none
};

struct Snapshot {
  int64_t step = 0;
  CheckpointPart part;  // host copies of the live tensors
};

// Fills `snapshot` with host copies of `live`. The tensors of the snapshot's
// previous filling are reused where they fit (every save after the first: no
// new host memory, no page faults to fault it in); a GPU's are copied into
// page-locked memory, which is fast, and synchronously, so they are complete
// on return.
void take_snapshot(Snapshot& snapshot, int64_t step, const CheckpointPart& live);

// All of a checkpoint, as one process that holds all of it writes it: the
// model, optimizer.pt from `adam`, and `state` (the live tensors).
CheckpointPart whole_checkpoint(const torch::nn::Module& model, torch::optim::Adam& adam,
                                nlohmann::json state);

}  // namespace checkpoint
