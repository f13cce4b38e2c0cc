// The communicator for a training device: NCCL for CUDA devices (when built
// with it), MPI for the CPU (and for CUDA tensors staged through host memory).
//
//   backend "auto": nccl on cuda:N, mpi on the CPU;  "mpi" | "nccl": forced.
// Asking for what this build or device cannot do throws, saying why.
#pragma once
#include <memory>
#include <string>

#include "trainer/distributed/communicator.h"

namespace distributed {

bool nccl_built();  // this binary was built with the NCCL backend

std::unique_ptr<Communicator> make_communicator(const std::string& backend,
                                                const torch::Device& device);

}  // namespace distributed
