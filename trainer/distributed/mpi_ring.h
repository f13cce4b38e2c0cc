// The MPI communicator's own ring collectives (trainer/distributed/mpi_communicator.h),
// over point-to-point messages on MPI_COMM_WORLD, in host memory (device
// tensors come staged: trainer/distributed/mpi_staging.h).
#pragma once
#include <memory>

#include "trainer/distributed/communicator.h"
#include "trainer/distributed/mpi_staging.h"

namespace distributed::mpi {

// Ring reduce-scatter, started: `input` holds world equal chunks; rank r
// ends with chunk r summed over the ranks in `result` when the Work is done.
// Its messages carry `tag`, unique among the collectives in flight.
std::unique_ptr<Work> start_ring_reduce_scatter(Staged input, Staged result, int rank, int world,
                                                int tag);

// Ring allgather in place, blocking: `flat` holds world equal chunks, this
// rank's its own; afterwards every chunk.
void ring_allgather(const torch::Tensor& flat, int rank, int world);

}  // namespace distributed::mpi
