# Shared by the GPU tests (label gpu): they skip (exit 77, never a pass)
# where no GPU is visible or the build lacks what they test.
# Usage: source after setting $build and $src.

# The build's own record of what it built (CMakeLists.txt: TRAINER_BUILT_*),
# not the option asked for, which stays ON where NCCL was not found.
build_has() {  # <CUDA|NCCL>
  grep -q "^TRAINER_BUILT_$1:INTERNAL=ON" "$build/CMakeCache.txt" 2>/dev/null
}

require_gpu() {
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
  fi
  if ! build_has CUDA; then
    echo "SKIP: $build is not a CUDA build (scripts/build.sh --torch pypi)"; exit 77
  fi
}

# The tests of the NCCL backend: a GPU, and a build with NCCL.
require_nccl() {
  require_gpu
  if ! build_has NCCL; then
    echo "SKIP: $build has no NCCL backend (NCCL was not found when it was configured)"; exit 77
  fi
}
