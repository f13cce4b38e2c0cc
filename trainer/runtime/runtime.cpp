#include "trainer/runtime/runtime.h"

#include <sched.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/logging.h"

namespace runtime {

namespace {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

// The BLAS shared object this process mapped, resolved through symlinks and
// Debian's alternatives (e.g. .../openblas-openmp/libblas.so.3).
std::string mapped_blas() {
  std::ifstream maps("/proc/self/maps");
  std::string line, found;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = std::filesystem::path(path).filename();
    if (file.rfind("libblas", 0) == 0 || file.rfind("libopenblas", 0) == 0 ||
        file.rfind("libmkl", 0) == 0 || file.rfind("libblis", 0) == 0) {
      std::error_code ec;
      found = std::filesystem::canonical(path, ec).string();
      if (file.rfind("libblas", 0) == 0) break;  // the one LibTorch links to
    }
  }
  return found;
}

}  // namespace

RuntimeInfo setup_runtime(const launch::ProcessInfo& info, int threads) {
  RuntimeInfo rt;
  // A rank bound to some of the node's cores (mpirun --map-by slot:PE=T) owns
  // them; an unbound one shares the node's cores with its node's other ranks.
  const int affinity = usable_cores();
  const int node_cores = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  rt.cores_per_rank =
      affinity < node_cores ? affinity : std::max(1, node_cores / std::max(1, info.local_size));
  rt.threads = threads > 0 ? threads : rt.cores_per_rank;
  torch::set_num_threads(rt.threads);
  torch::set_num_interop_threads(1);

  // Touch BLAS once so the library is mapped, then see which one it is.
  (void)torch::mm(torch::ones({2, 2}), torch::ones({2, 2}));
  rt.blas = mapped_blas();
  rt.reference_blas = rt.blas.find("/blas/libblas") != std::string::npos;
  if (rt.reference_blas) {
    logging::warn(
        "!!! LibTorch runs on the REFERENCE BLAS ({}), ~15x slower than OpenBLAS. "
        "Install libopenblas0-openmp (scripts/setup.sh does) !!!",
        rt.blas);
  }
  if (rt.threads > affinity) {
    logging::warn(
        "!!! {} torch threads but this rank may run on only {} core(s): they will share "
        "them. Launch with `mpirun --bind-to none` or `--map-by slot:PE={}` !!!",
        rt.threads, affinity, rt.threads);
  }
  if (rt.threads < rt.cores_per_rank) {
    logging::warn(
        "!!! {} torch thread(s) per rank, but {} core(s) per rank are usable: "
        "training will be slower than it could be !!!",
        rt.threads, rt.cores_per_rank);
  }
  return rt;
}

}  // namespace runtime
