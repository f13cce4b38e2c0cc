// Memory that every rank of a job maps, when all ranks run on one machine:
// one POSIX shared-memory object, created by rank 0 under a name drawn at
// random, opened by the others and unlinked as soon as all have mapped it, so
// it goes away with the last mapping (a crashed job leaves nothing in /dev/shm).
//
//   std::optional<torch::Tensor> shared = node_shared_memory(comm, numel);  // collective
//
// A zero-filled float32 CPU tensor of `numel` elements over the same pages on
// every rank. std::nullopt on every rank alike when some rank runs on another
// machine (it cannot open the name) or the memory cannot be had: the pages are
// reserved up front, so a /dev/shm too small fails here, not later with a
// SIGBUS. One rank's writes are seen by the others after comm.barrier().
#pragma once
#include <cstdint>
#include <optional>

#include <torch/torch.h>

#include "trainer/distributed/communicator.h"

namespace distributed {

std::optional<torch::Tensor> node_shared_memory(Communicator& comm, int64_t numel);

}  // namespace distributed
