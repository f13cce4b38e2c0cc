// The device a rank computes on, and the backend its collectives use.
//
//   train.device = auto   a GPU when LibTorch has CUDA and the node one for
//                         this rank, else the CPU
//                  cpu | cuda (cuda without a GPU is an error)
//   dist.backend = auto   nccl on GPUs (when built in), mpi on CPUs | mpi | nccl
//
// Which GPU, from what the rank sees:
//   - the node's ranks see different GPU sets (the scheduler bound GPUs per
//     rank: Slurm --gpus-per-task, --gpu-bind, CUDA_VISIBLE_DEVICES per
//     rank): the first GPU of its own set;
//   - they see the same set: cuda:<local rank> when there are enough; with
//     fewer GPUs than ranks, NCCL (one GPU per rank) is an error naming the
//     node and the counts, and MPI shares them round-robin (for testing).
// No rank falls back to the CPU on its own: at start-up all ranks gather
// their choices, and ranks that differ in device type or backend stop the
// job, named.
#pragma once
#include <string>

#include <torch/torch.h>

#include "launch/process.h"
#include "launch/ranks.h"

namespace runtime {

struct DeviceRequest {
  std::string device = "auto";   // train.device
  std::string backend = "auto";  // dist.backend
  std::string node;              // for messages
  int local_rank = 0, local_size = 1;
  int visible_gpus = 0;          // GPUs this rank sees (0 without CUDA)
  bool node_shares_gpus = true;  // every rank on the node sees the same GPUs
  bool nccl_built = false;
};

struct DeviceChoice {
  torch::Device device = torch::kCPU;
  std::string backend;  // "mpi" | "nccl"
};

// Pure: the rules above. Throws std::invalid_argument naming the node and counts.
DeviceChoice choose_device(const DeviceRequest& request);

// Collective: this rank's choice, after every rank agreed on device type and
// backend (std::runtime_error naming the ranks that differ). Applies
// train.deterministic before any CUDA work.
DeviceChoice agree_on_device(const launch::ProcessInfo& process, const std::string& device,
                             const std::string& backend, bool deterministic,
                             const launch::Ranks& ranks);

}  // namespace runtime
