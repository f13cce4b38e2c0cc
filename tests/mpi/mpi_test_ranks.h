// The MPI test programs' one communicator (MPI is initialised once per
// process) and this rank's place in it.
#pragma once
#include "trainer/distributed/mpi_communicator.h"

inline distributed::MpiCommunicator& comm() {
  static distributed::MpiCommunicator instance;
  return instance;
}
inline int rank() { return comm().rank(); }
inline int world() { return comm().world_size(); }
// 1 + 2 + ... + world: the sum over ranks of (rank + 1).
inline double rank_sum() { return world() * (world() + 1) / 2.0; }
