# Shared by the GPU tests (label gpu): they skip (exit 77, never a pass)
# where no GPU is visible or the build has no CUDA.
# Usage: source after setting $build and $src.
require_gpu() {
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU visible (nvidia-smi -L)"; exit 77
  fi
  if ! grep -q "^TRAINER_WITH_NCCL:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null &&
     ! ldd "$build/bin/trainer" | grep -q libtorch_cuda; then
    echo "SKIP: $build is not a CUDA build (scripts/build.sh --torch pypi)"; exit 77
  fi
}
