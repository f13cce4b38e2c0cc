#include "trainer/distributed/consistency.h"

#include <stdexcept>
#include <string>

namespace distributed {

namespace {

// The tensor's bits as integers of the same width.
torch::Tensor bits(const torch::Tensor& t) {
  switch (t.element_size()) {
    case 8: return t.view(torch::kLong);
    case 4: return t.view(torch::kInt);
    case 2: return t.view(torch::kShort);
    default: return t.view(torch::kByte);
  }
}

}  // namespace

int64_t parameter_checksum(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  uint64_t hash = 1469598103934665603ull;
  for (const auto& p : params) {
    const torch::Tensor b = bits(p.detach().contiguous());
    // The sum of the bits: any changed value changes it (barring a
    // coincidence no diverging run produces); parameters chain in order.
    const auto sum = static_cast<uint64_t>(b.sum(torch::kLong).item<int64_t>());
    hash = (hash ^ sum) * 1099511628211ull;
  }
  return static_cast<int64_t>(hash);
}

void check_replicas_equal(const std::vector<torch::Tensor>& params, Communicator& comm,
                          int64_t step) {
  torch::Tensor mine = torch::tensor({parameter_checksum(params)}, torch::kLong);
  if (!params.empty()) mine = mine.to(params.front().device());
  const torch::Tensor all = comm.allgather(mine).cpu();  // [world, 1]
  std::string differing;
  for (int r = 1; r < comm.world_size(); ++r)
    if (all[r][0].item<int64_t>() != all[0][0].item<int64_t>())
      differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  if (!differing.empty())
    throw std::runtime_error("parameters of rank(s) " + differing +
                             " differ from rank 0's at step " + std::to_string(step) +
                             ": the replicas diverged (a rank computed different gradients or "
                             "updates)");
}

}  // namespace distributed
