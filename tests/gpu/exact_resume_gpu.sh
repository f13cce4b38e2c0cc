#!/usr/bin/env bash
# Exact resume on the GPU: deterministic mode, 2 ranks sharing the GPU over
# MPI, fp32, bf16 and fp16 (its loss scale, kept on the device, round-trips through
# state.json): bitwise the uninterrupted run (tests/resume/exact_resume.sh),
# and the preemption cases (SIGUSR1, SIGTERM) of tests/resume/preemption_and_failures.sh.
# GPU_PRECISIONS: others than these three (scripts/gpu_check.sh: bf16 and fp32).
# Usage: exact_resume_gpu.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/gpu/gpu.bash"
require_gpu
for precision in ${GPU_PRECISIONS:-fp32 bf16 fp16}; do
  # Resuming at the same world size is bitwise in every precision. Across
  # world sizes only in IEEE fp32 (train.tf32 false, as the CPU computes): in
  # 16-bit and TF32 a world size rounds its own way (the optimizer's moments
  # of 2 ranks and of 1 differed by 2.1e-2 of their norm in bf16 and by 2e-3
  # in TF32 on an H200, against 1e-4 allowed), which
  # tests/gpu/shared_gpu_invariance.sh bounds.
  tf32=true ACROSS_SIZES=0
  [ "$precision" = fp32 ] && tf32=false ACROSS_SIZES=1
  export ACROSS_SIZES TRAINER_EXTRA_ARGS="--train.device cuda --dist.backend mpi --train.deterministic true \
--train.precision $precision --train.tf32 $tf32"
  bash "$src/tests/resume/exact_resume.sh" "$build" "$src"
  bash "$src/tests/resume/preemption_and_failures.sh" "$build" "$src"
done
