// Data-parallel gradient sync: after backward, every rank's gradients are
// replaced by their sum over ranks (one flat buffer, one allreduce).
// Parameters start equal on every rank through broadcast_parameters.
#pragma once
#include <vector>

#include <torch/torch.h>

#include "trainer/dist/communicator.h"

namespace dist {

void broadcast_parameters(const std::vector<torch::Tensor>& params, Communicator& comm);

// Parameters without a gradient (unused this step) count as zero gradient.
void allreduce_gradients(const std::vector<torch::Tensor>& params, Communicator& comm);

}  // namespace dist
