#!/usr/bin/env bash
# Ranks sharing one GPU over the MPI backend (CUDA tensors staged through host
# memory) train what one rank with accumulation trains: the global-batch
# invariant on the GPU, fp32 (1e-5) and bf16 (bf16's rounding of differently
# split matrix products: 2e-2).
# Usage: shared_gpu_invariance.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/gpu/gpu.bash"
require_gpu
TRAINER_EXTRA_ARGS="--train.device cuda --dist.backend mpi --train.precision fp32 --train.tf32 false" \
  INVARIANCE_RTOL=1e-5 bash "$src/tests/mpi/global_batch_invariance.sh" "$build" "$src"
TRAINER_EXTRA_ARGS="--train.device cuda --dist.backend mpi --train.precision bf16" \
  INVARIANCE_RTOL=2e-2 bash "$src/tests/mpi/global_batch_invariance.sh" "$build" "$src"
