// A checkpoint's content, copied off the live tensors at a step boundary so
// that training can go on changing them while the copy is written
// (background_save.h). Taking it is what a save costs the training: a copy
// of the weights and Adam's moments in host memory (on a GPU, a copy to the
// host that the device stream finishes before it returns), not the writing,
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

// Host copies of `model`'s state dict and `adam`'s state, owned by the snapshot.
Snapshot take_snapshot(int64_t step, const torch::nn::Module& model, torch::optim::Adam& adam,
                       nlohmann::json state);

}  // namespace checkpoint
