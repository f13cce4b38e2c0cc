#!/usr/bin/env bash
# Exact resume on the GPU: deterministic mode, 2 ranks sharing the GPU over
# MPI, fp32, bf16 and fp16 (its loss scale, kept on the device, round-trips through
# state.json): bitwise the uninterrupted run (tests/resume/exact_resume.sh),
# and the preemption cases (SIGUSR1, SIGTERM) of tests/resume/preemption_and_failures.sh.
# GPU_PRECISIONS: others than these three (scripts/gpu_check.sh: bf16 only).
# Usage: exact_resume_gpu.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/gpu/gpu.bash"
require_gpu
for precision in ${GPU_PRECISIONS:-fp32 bf16 fp16}; do
  export TRAINER_EXTRA_ARGS="--train.device cuda --dist.backend mpi --train.deterministic true --train.precision $precision"
  bash "$src/tests/resume/exact_resume.sh" "$build" "$src"
  bash "$src/tests/resume/preemption_and_failures.sh" "$build" "$src"
done
