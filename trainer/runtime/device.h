// The device a rank computes on, and the backend its collectives use.
//
//   train.device = auto   a GPU when LibTorch has CUDA and every rank sees one, else the CPU
//                  cpu | cuda (cuda without a GPU is an error)
//   dist.backend = auto   nccl on GPUs (when built in), mpi on CPUs | mpi | nccl
//
// Which GPU, from what the GPUs are (their UUIDs), not from what they are
// called: CUDA_VISIBLE_DEVICES and a node's per-task device cgroups renumber
// them, so "GPU 0" of two ranks may be two GPUs, and "0,1" of two ranks the
// same two. The ranks of a node gather the identities of the GPUs each sees;
//   - ranks that see the same set split it by their index among those ranks,
//     in the order the first of them sees it: with no binding (all see all)
//     local rank i takes GPU i; with `srun --gpu-bind=closest` each socket's
//     ranks split that socket's GPUs;
//   - a rank that alone sees its set takes its first GPU (`--gpus-per-task=1`,
//     or per-task cgroups where each rank's one GPU is called 0);
//   - more ranks than GPUs in a set: NCCL is an error; MPI shares them
//     round-robin (for testing), said in the log;
//   - two NCCL ranks on one physical GPU (e.g. overlapping sets on a mixed
//     node) is an error naming the node, the ranks and the GPU.
// Every rank computes the whole job's assignment from the same gathered views,
// so all stop with the same message, or none. The chosen GPU is then made
// this process's current CUDA device (the NCCL communicator and LibTorch's
// default streams and events belong to the current device).
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/choices/compute.h"

namespace runtime {

// What one rank is: where it runs, its torch threads, the GPUs it sees.
struct RankView {
  std::string node;
  int threads = 1;
  std::vector<std::string> gpus;  // identities (UUIDs) of its visible GPUs, in CUDA's order
};

struct DeviceRequest {
  choices::Device device = choices::Device::kAuto;     // train.device
  choices::Backend backend = choices::Backend::kAuto;  // dist.backend
  bool nccl_built = false;
};

struct DeviceChoice {
  torch::Device device = torch::kCPU;
  choices::Backend backend = choices::Backend::kMpi;  // kMpi | kNccl
  std::string gpu;          // its GPU's identity ("" on the CPU)
  std::vector<int> shares;  // the other ranks on the same GPU (MPI only)
};

// Pure: every rank's choice (index = rank) by the rules above. Throws
// std::invalid_argument naming the node, the ranks and the GPUs.
std::vector<DeviceChoice> choose_devices(const DeviceRequest& request,
                                         const std::vector<RankView>& ranks);

// Pure: one line per node for the log: host, ranks, local ranks, threads, and
// each rank's device (GPU index in its own numbering and UUID).
std::vector<std::string> describe_layout(const std::vector<RankView>& ranks,
                                         const std::vector<DeviceChoice>& choices);

// Collective: this rank's choice, made its current device, after every rank
// gathered every rank's view; rank 0 logs the layout. Its CUDA calls are the
// process's first: train.deterministic (runtime/determinism.h) comes before.
DeviceChoice agree_on_device(const launch::ProcessInfo& process, choices::Device device,
                             choices::Backend backend, const launch::Ranks& ranks);

}  // namespace runtime
