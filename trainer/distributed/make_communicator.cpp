#include "trainer/distributed/make_communicator.h"

#include <stdexcept>

#include "build_options.h"
#include "trainer/distributed/mpi_communicator.h"
#if TRAINER_WITH_NCCL
#include "trainer/distributed/nccl_communicator.h"
#endif

namespace distributed {

bool nccl_built() { return TRAINER_WITH_NCCL; }

std::unique_ptr<Communicator> make_communicator(choices::Backend backend,
                                                const torch::Device& device) {
  using choices::Backend;
  const Backend chosen = backend != Backend::kAuto ? backend
                         : device.is_cuda()        ? Backend::kNccl
                                                   : Backend::kMpi;
  if (chosen == Backend::kMpi) return std::make_unique<MpiCommunicator>();
  if (!device.is_cuda())
    throw std::invalid_argument("dist.backend = nccl needs a CUDA device; this rank has " +
                                device.str());
#if TRAINER_WITH_NCCL
  return std::make_unique<NcclCommunicator>(device.index());
#else
  throw std::invalid_argument(
      "dist.backend = nccl: this binary was built without NCCL (CUDA/NCCL not found, or "
      "-DTRAINER_WITH_NCCL=OFF)");
#endif
}

}  // namespace distributed
