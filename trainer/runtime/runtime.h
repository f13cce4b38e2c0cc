// CPU runtime set-up for one rank: torch threads and a check of the BLAS that
// LibTorch will use (Debian's LibTorch calls whatever libblas.so.3 points to;
// the reference BLAS is ~15x slower than OpenBLAS).
#pragma once
#include <string>

#include "launch/process.h"

namespace runtime {

struct RuntimeInfo {
  int threads = 1;         // torch intra-op threads of this rank
  int cores_per_rank = 1;  // the cores a bound rank owns, else node cores / ranks on the node
  std::string blas;        // the BLAS library actually mapped into the process
  bool reference_blas = false;
};

// threads == 0: cores_per_rank. Warns loudly on the
// reference BLAS and on fewer threads than the rank could use.
RuntimeInfo setup_runtime(const launch::ProcessInfo& info, int threads);

}  // namespace runtime
