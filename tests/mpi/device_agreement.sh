#!/usr/bin/env bash
# All ranks agree on the device at start-up (runtime/device.h): when one rank
# is told another device than the others (here rank 1 is told
# train.device = cuda, rank 0 cpu, through mpirun's per-rank arguments),
# every rank stops with an error naming that rank and its setting — none
# trains on, none hangs, none falls back to the CPU on its own. (Every rank
# computes the whole job's assignment from the same gathered views; the unit
# test runtime_device_test covers the rules themselves.)
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
grep -q "the ranks were given different settings: rank 0: train.device = cpu, dist.backend = auto; rank 1: train.device = cuda" \
  agree.log || fail "no error naming rank 1 and its setting" agree.log
[ "$(grep -c "aborts the job: cannot choose the ranks' devices" agree.log)" -ge 1 ] ||
  fail "no rank stopped on it" agree.log
[ ! -e runs/agree/metrics.jsonl ] || fail "a rank trained" agree.log
echo "device agreement: OK"
