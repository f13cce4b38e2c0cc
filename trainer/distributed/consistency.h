// Are the replicas still replicas? Data parallelism keeps every rank's
// parameters bitwise equal (same start, same summed gradients, same update);
// a bug or a bad node breaks that silently. Every N steps each rank hashes
// its parameters' bits, the hashes are gathered, and any rank that differs
// from rank 0 stops the job by name.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "trainer/distributed/communicator.h"

namespace distributed {

// A hash of the parameters' bits: per parameter the sum of its bits as integers,
// chained in parameter order (FNV-1a style).
int64_t parameter_checksum(const std::vector<torch::Tensor>& params);

// Collective. Throws std::runtime_error on every rank, naming the ranks whose
// parameters differ from rank 0's, when they are not all equal.
void check_replicas_equal(const std::vector<torch::Tensor>& params, Communicator& comm,
                          int64_t step);

}  // namespace distributed
