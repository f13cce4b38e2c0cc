// A checkpoint's content, copied off the live tensors at a step boundary so
// that training can go on changing them while the copy is written
// (background_save.h). Taking it is what a save costs the training: a copy
// of the weights and Adam's moments into host memory, not the writing,
// checksumming and fsyncing of the files.
#pragma once
#include <cstdint>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/state_dict.h"

namespace checkpoint {

struct Snapshot {
  int64_t step = 0;
  NamedTensors model;      // model.pt: parameters and buffers (state_dict.h)
  NamedTensors optimizer;  // optimizer.pt: Adam's moments and steps (optimizer_state.h)
  nlohmann::json state;    // state.json
};

// Fills `snapshot` with host copies of `model`'s state dict and `adam`'s
// state. The tensors of the snapshot's previous filling are reused where
// they fit (every save after the first: no new host memory, no page faults
// to fault it in); a GPU's are copied into page-locked memory, which is
// fast, and synchronously, so they are complete on return.
void take_snapshot(Snapshot& snapshot, int64_t step, const torch::nn::Module& model,
                   torch::optim::Adam& adam, nlohmann::json state);

}  // namespace checkpoint
