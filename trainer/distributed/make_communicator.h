// The communicator for a training device: NCCL for CUDA devices (when built
// with it), MPI for the CPU (and for CUDA tensors staged through host memory).
//
//   backend kAuto: nccl on cuda:N, mpi on the CPU;  kMpi | kNccl: forced.
// Asking for what this build or device cannot do throws, saying why.
#pragma once
#include <memory>

#include "trainer/choices/compute.h"
#include "trainer/distributed/communicator.h"

namespace distributed {

bool nccl_built();  // this binary was built with the NCCL backend

std::unique_ptr<Communicator> make_communicator(choices::Backend backend,
                                                const torch::Device& device);

}  // namespace distributed
