#!/usr/bin/env bash
# All ranks agree on the device at start-up (runtime/device.h): when one rank
# cannot have the device it is told to use (here rank 1 is told
# train.device = cuda on a node without a GPU, through mpirun's per-rank
# arguments), every rank stops with an error naming that rank and why —
# none trains on, none hangs, none falls back to the CPU on its own.
# Usage: device_agreement.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch mpi-device
if nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: this node has a GPU; the test needs one without"; exit 77
fi
prepare_tiny data
common=("$build/bin/trainer" "${TINY[@]}" --run.name agree --train.max_steps 2)
if timeout 120 bash "$src/scripts/mpirun.sh" -np 1 "${common[@]}" --train.device cpu : \
     -np 1 "${common[@]}" --train.device cuda > agree.log 2>&1; then
  fail "the job ran although rank 1 could not have its device" agree.log
fi
grep -q "rank 1 cannot choose a device: train.device = cuda, but node .* has 2 rank(s) and 0 visible GPU(s)" \
  agree.log || fail "no error naming rank 1 and the counts" agree.log
[ ! -e runs/agree/metrics.jsonl ] || fail "a rank trained" agree.log
echo "device agreement: OK"
