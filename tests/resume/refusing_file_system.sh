#!/usr/bin/env bash
# Dataset, run directory and evaluation on a file system that refuses POSIX
# locks and fsync (an LD_PRELOAD'ed library: refusing_file_system.c):
#   - no locks, no fsync (EINVAL): prepare_data, training and evaluation
#     all run (HDF5 takes no lock on shards), each refusal said once as a
#     warning; every checkpoint verifies and the run resumes;
#   - fsync of a checkpoint's files failing with EIO: the trainer stops at
#     its first save (exit 1) naming fsync and the file, and leaves no
#     checkpoint, not even a temporary one.
# Usage: refusing_file_system.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch refusing-fs
cc -shared -fPIC -O1 -o refuse.so "$src/tests/resume/refusing_file_system.c" -ldl ||
  fail "cannot build the LD_PRELOAD library"
refusing() { env LD_PRELOAD="$work/refuse.so" "$@"; }  # NOLOCK / FSYNC_ERRNO set per call
trainer=("$build/bin/trainer" "${TINY[@]}" --train.max_steps 12 --train.save_every 5)

refusing NOLOCK=1 FSYNC_ERRNO=22 "$build/bin/prepare_data" --task reverse --out data --seed 3 \
  --train-size 333 --valid-size 40 --test-size 20 --min-len 2 --max-len 9 --symbols 13 \
  > prepare.log 2>&1 || fail "prepare_data without locks and fsync" prepare.log
grep -q "offers no fsync (Invalid argument)" prepare.log || fail "no fsync warning" prepare.log

refusing NOLOCK=1 FSYNC_ERRNO=22 "${trainer[@]}" --run.name plain > plain.log 2>&1 ||
  fail "training without locks and fsync" plain.log
grep -q "does not honour POSIX locks; a second trainer" plain.log || fail "no lock warning" plain.log
[ "$(grep -c "offers no fsync" plain.log)" = 1 ] || fail "not one fsync warning" plain.log
for dir in runs/plain/checkpoints/step_*; do
  (cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "$dir does not verify"
done
refusing NOLOCK=1 FSYNC_ERRNO=22 "${trainer[@]}" --run.name plain --train.max_steps 15 \
  > resumed.log 2>&1 || fail "resuming without locks and fsync" resumed.log
grep -q "resuming from .*step_00000012" resumed.log || fail "did not resume" resumed.log
refusing NOLOCK=1 FSYNC_ERRNO=22 "$build/bin/evaluate" --run runs/plain --split test \
  > eval.log 2>&1 || fail "evaluating without locks and fsync" eval.log

status=0
refusing FSYNC_ERRNO=5 FSYNC_PATH=/checkpoints/ "${trainer[@]}" --run.name eio > eio.log 2>&1 ||
  status=$?
[ "$status" = 1 ] || fail "fsync EIO: exit $status, expected 1" eio.log
grep -q "step *5 |" eio.log || fail "fsync EIO: training did not reach the first save" eio.log
grep -q "cannot write .*runs/eio/checkpoints/.*: fsync: Input/output error" eio.log ||
  fail "EIO not named" eio.log
[ -z "$(ls -A runs/eio/checkpoints)" ] || fail "fsync EIO: left $(ls runs/eio/checkpoints)" eio.log
echo "refusing file system: OK"
