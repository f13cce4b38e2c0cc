// Text from every rank, for results that are not tensors (e.g. the evaluation
// job's hypotheses, serialised): two allgathers, of the lengths and then of
// the bytes padded to the longest.
#pragma once
#include <string>
#include <vector>

#include "trainer/dist/communicator.h"

namespace dist {

// [world_size]: element r is rank r's `local`. Collective.
std::vector<std::string> allgather_text(Communicator& comm, const std::string& local);

}  // namespace dist
