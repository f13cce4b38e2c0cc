#!/usr/bin/env bash
# The NCCL backend compiles and links wherever CUDA and NCCL are installed
# (here: /usr/local/cuda, no GPU). It cannot run without a GPU, so what is
# checked is the build: the trainer links libnccl and contains the NCCL
# communicator, and asking for it on a CPU gives a clear error, not a crash.
# Usage: nccl_backend_built.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1")
if [ ! -f /usr/local/cuda/include/nccl.h ]; then
  echo "no NCCL under /usr/local/cuda on this machine: the NCCL backend is not built here"
  exit 0
fi
grep -q "^TRAINER_WITH_NCCL:BOOL=ON" "$build/CMakeCache.txt" || {
  echo "NCCL is installed but the build has TRAINER_WITH_NCCL off"; exit 1; }
# (grep reads whole outputs: `cmd | grep -q` can fail under pipefail when grep exits early)
grep -q "libnccl.so" <<<"$(ldd "$build/bin/trainer")" || { echo "trainer does not link libnccl"; exit 1; }
grep -q "dist::NcclCommunicator::iallreduce_sum" <<<"$(nm -C "$build/bin/trainer")" || {
  echo "trainer does not contain the NCCL communicator"; exit 1; }

work=$(mktemp -d /tmp/nccl-built.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$build/bin/prepare_data" --task copy --out "$work/data" --train-size 20 --valid-size 0 \
  --test-size 0 >/dev/null
if "$build/bin/trainer" --data.dir "$work/data" --run.out_dir "$work/runs" \
    --dist.backend nccl > "$work/log" 2>&1; then
  echo "trainer accepted dist.backend = nccl on a CPU"; exit 1
fi
grep -q "dist.backend = nccl needs a CUDA device" "$work/log" || { cat "$work/log"; exit 1; }
echo "NCCL backend: built and linked (libnccl, NcclCommunicator); not run (no GPU)"
