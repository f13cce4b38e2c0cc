#include "trainer/runtime/device.h"

#include <cstdlib>
#include <stdexcept>

#include "launch/logging.h"
#include "trainer/distributed/make_communicator.h"
#include "trainer/runtime/determinism.h"

namespace runtime {
namespace {

std::string counts(const DeviceRequest& r) {
  return "node " + r.node + " has " + std::to_string(r.local_size) + " rank(s) and " +
         std::to_string(r.visible_gpus) + " visible GPU(s)";
}

int gpu_index(const DeviceRequest& r, const std::string& backend) {
  if (!r.node_shares_gpus) return 0;  // bound by the scheduler: its own first GPU
  if (r.visible_gpus >= r.local_size) return r.local_rank;
  if (backend == "nccl")
    throw std::invalid_argument(counts(r) +
                                ": NCCL needs one GPU per rank (fewer ranks per "
                                "node, or dist.backend = \"mpi\" to share GPUs)");
  return r.local_rank % r.visible_gpus;
}

// The GPU set this rank sees, as the scheduler or the user restricted it.
std::string visible_set() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v != nullptr ? v : "(all)";
}

}  // namespace

DeviceChoice choose_device(const DeviceRequest& r) {
  const bool gpu = r.device == "cuda" || (r.device == "auto" && r.visible_gpus > 0);
  if (gpu && r.visible_gpus == 0)
    throw std::invalid_argument("train.device = cuda, but " + counts(r));
  DeviceChoice choice;
  choice.backend = r.backend != "auto" ? r.backend : (gpu && r.nccl_built ? "nccl" : "mpi");
  if (choice.backend == "nccl" && !gpu)
    throw std::invalid_argument("dist.backend = nccl needs a CUDA device; " + counts(r));
  if (gpu)
    choice.device =
        torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu_index(r, choice.backend)));
  return choice;
}

DeviceChoice agree_on_device(const launch::ProcessInfo& process, const std::string& device,
                             const std::string& backend, bool deterministic,
                             const launch::Ranks& ranks) {
  if (deterministic) use_deterministic_algorithms();  // before the first CUDA call
  DeviceRequest request;
  request.device = device;
  request.backend = backend;
  request.node = process.node;
  request.local_rank = process.local_rank;
  request.local_size = process.local_size;
  request.visible_gpus =
      torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  request.nccl_built = distributed::nccl_built();
  const std::vector<std::string> sets = ranks.allgather(process.node + "\n" + visible_set());
  for (const std::string& s : sets)
    if (s.substr(0, s.find('\n')) == process.node && s != sets[process.rank])
      request.node_shares_gpus = false;

  std::string error;
  DeviceChoice choice;
  try {
    choice = choose_device(request);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank learns every rank's choice (or error): all stop, or none.
  const std::string mine = error.empty() ? std::string(choice.device.is_cuda() ? "cuda" : "cpu") +
                                               " with " + choice.backend
                                         : "error: " + error;
  const std::vector<std::string> all = ranks.allgather(mine);
  std::string mismatch;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].rfind("error: ", 0) == 0)
      throw std::runtime_error("rank " + std::to_string(r) +
                               " cannot choose a device: " + all[r].substr(7));
    if (all[r] != all[0]) mismatch += "; rank " + std::to_string(r) + ": " + all[r];
  }
  if (!mismatch.empty())
    throw std::runtime_error("ranks disagree on device type or backend: rank 0: " + all[0] +
                             mismatch);
  logging::info("every rank computes on {}; this rank on {}", all[0], choice.device.str());
  return choice;
}

}  // namespace runtime
