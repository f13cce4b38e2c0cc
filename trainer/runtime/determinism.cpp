#include "trainer/runtime/determinism.h"

#include <ATen/Context.h>

#include <cstdlib>

namespace runtime {

void use_deterministic_algorithms() {
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

}  // namespace runtime
