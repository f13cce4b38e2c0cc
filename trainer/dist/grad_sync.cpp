#include "trainer/dist/grad_sync.h"

namespace dist {

void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params) {
    torch::Tensor buffer = p.detach().contiguous();
    comm.broadcast(buffer, 0);
    p.copy_(buffer);
  }
}

void allreduce_gradients(const std::vector<torch::Tensor>& params, Communicator& comm) {
  if (comm.world_size() == 1) return;
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad().reshape({-1}));
  }
  torch::Tensor flat = torch::cat(grads);  // [sum of numel]
  comm.allreduce_sum(flat);
  int64_t offset = 0;
  for (const auto& p : params) {
    const int64_t n = p.numel();
    p.mutable_grad().copy_(flat.narrow(0, offset, n).view_as(p));
    offset += n;
  }
}

}  // namespace dist
