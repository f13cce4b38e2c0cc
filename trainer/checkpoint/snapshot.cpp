#include "trainer/checkpoint/snapshot.h"

#include <utility>

namespace checkpoint {

namespace {

bool same_layout(const NamedTensors& copies, const NamedTensors& live) {
  if (copies.size() != live.size()) return false;
  for (size_t i = 0; i < live.size(); ++i) {
    const torch::Tensor& copy = copies[i].second;
    const torch::Tensor& tensor = live[i].second;
    if (copies[i].first != live[i].first || !copy.sizes().equals(tensor.sizes()) ||
        copy.scalar_type() != tensor.scalar_type())
      return false;
  }
  return true;
}

// `live` copied into `copies`, whose tensors are made anew only when the
// names, shapes or types differ (the first save).
void copy_into(NamedTensors& copies, const NamedTensors& live) {
  if (!same_layout(copies, live)) {
    copies.clear();
    for (const auto& [name, tensor] : live)
      copies.emplace_back(
          name,
          torch::empty(
              tensor.sizes(),
              torch::TensorOptions().dtype(tensor.scalar_type()).pinned_memory(tensor.is_cuda())));
  }
  for (size_t i = 0; i < live.size(); ++i) copies[i].second.copy_(live[i].second);
}

}  // namespace

void take_snapshot(Snapshot& snapshot, int64_t step, const CheckpointPart& live) {
  torch::NoGradGuard no_grad;
  snapshot.step = step;
  copy_into(snapshot.part.model, live.model);
  snapshot.part.optimizer.name = live.optimizer.name;
  copy_into(snapshot.part.optimizer.tensors, live.optimizer.tensors);
  snapshot.part.state = live.state;
}

CheckpointPart whole_checkpoint(const torch::nn::Module& model, torch::optim::Adam& adam,
                                nlohmann::json state) {
  return {
      named_state(model), {kWholeOptimizerFile, optimizer_tensors(adam, model)}, std::move(state)};
}

}  // namespace checkpoint
