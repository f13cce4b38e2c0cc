#!/usr/bin/env bash
# The embedded default end to end on cuda:0 (1 rank, NCCL): >= 99% exact match,
# in fp32 and in fp16 (dynamic loss scaling decided on the device), or in the
# precisions GPU_PRECISIONS names (scripts/gpu_check.sh: auto, what a user gets).
# Usage: default_job_gpu.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/gpu/gpu.bash"
require_nccl
for precision in ${GPU_PRECISIONS:-fp32 fp16}; do
  E2E_RANKS=1 TRAINER_EXTRA_ARGS="--train.device cuda --dist.backend nccl --train.precision $precision" \
    bash "$src/tests/e2e/default_job.sh" "$build" "$src"
done
