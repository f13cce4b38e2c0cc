#include "trainer/checkpoint/snapshot.h"

#include <utility>

#include "trainer/checkpoint/optimizer_state.h"

namespace checkpoint {

namespace {

// A CPU tensor of its own: copy = true copies CPU tensors too; a CUDA tensor's
// copy to pageable host memory is synchronous, so it is complete on return.
NamedTensors host_copies(const NamedTensors& live) {
  NamedTensors copies;
  copies.reserve(live.size());
  for (const auto& [name, tensor] : live)
    copies.emplace_back(name, tensor.detach().to(torch::kCPU, /*non_blocking=*/false,
                                                 /*copy=*/true));
  return copies;
}

}  // namespace

Snapshot take_snapshot(int64_t step, const torch::nn::Module& model, torch::optim::Adam& adam,
                       nlohmann::json state) {
  torch::NoGradGuard no_grad;
  Snapshot snapshot;
  snapshot.step = step;
  snapshot.model = host_copies(named_state(model));
  snapshot.optimizer = host_copies(optimizer_tensors(adam, model));
  snapshot.state = std::move(state);
  return snapshot;
}

}  // namespace checkpoint
