#!/usr/bin/env bash
# A full disk at each stage (a small tmpfs, filled, in a private mount
# namespace): the trainer at start-up, a log write mid-run and its first
# checkpoint; evaluate's results; prepare_data's dataset. Each is an error
# naming the file and "No space left on device", a non-zero exit, and no
# file left behind looking valid (no 0-byte config.toml, no checkpoint
# directory, no results.json).
# Usage: full_disk.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
if [ -z "${FULL_DISK_NAMESPACE:-}" ]; then  # a mount namespace of its own, for the tmpfs
  FULL_DISK_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@" ||
    { echo "SKIP: no mount namespace (unshare)"; exit 77; }
fi
source "$src/tests/script_lib.bash"
enter_scratch resume-full-disk
prepare_tiny data 20
trainer_run tiny 1 --train.max_steps 20 || fail "training" tiny.log
mkdir disk
disk() {  # <size>: a fresh tmpfs of that size at ./disk
  umount disk 2> /dev/null || true
  mount -t tmpfs -o "size=$1" none disk
}
fill() { dd if=/dev/zero of=disk/filler bs=4k 2> /dev/null || true; }
expect_error() {  # <log> <file named>
  grep -q "cannot write .*$2.*: No space left on device" "$1" || fail "no error naming $2 and ENOSPC" "$1"
}

# ---- start-up: the first file of the run directory cannot be written --------
disk 256k; fill
code=0; trainer_run start 1 --run.out_dir disk/runs --train.max_steps 5 || code=$?
[ "$code" != 0 ] || fail "the trainer ran on a full disk" start.log
expect_error start.log disk/runs/start/
[ ! -e disk/runs/start/config.toml ] || fail "a config.toml was left behind" start.log

# ---- a log write mid-run ---------------------------------------------------
disk 256k
trainer_run log 1 --run.out_dir disk/runs --train.max_steps 100000 --train.save_every 0 & job=$!
for _ in $(seq 600); do [ -s disk/runs/log/metrics.jsonl ] && break; sleep 0.1; done
fill
code=0; wait "$job" || code=$?
[ "$code" != 0 ] || fail "the trainer went on with a full disk" log.log
expect_error log.log metrics.jsonl

# ---- the first checkpoint ---------------------------------------------------
disk 96k
code=0; trainer_run ckpt 1 --run.out_dir disk/runs --train.max_steps 10 || code=$?
[ "$code" != 0 ] || fail "a checkpoint was saved on a full disk" ckpt.log
expect_error ckpt.log model.pt
grep -q "failed (there is no earlier checkpoint)" ckpt.log || fail "the message claims earlier checkpoints" ckpt.log
[ -z "$(ls -A disk/runs/ckpt/checkpoints 2> /dev/null)" ] || fail "a checkpoint directory was left" ckpt.log

# ---- evaluate's results ------------------------------------------------------
disk 64k; fill
code=0
"$build/bin/evaluate" --run runs/tiny --threads 1 --out disk/eval > eval.json 2> eval.log || code=$?
[ "$code" != 0 ] || fail "evaluate wrote results on a full disk" eval.log
expect_error eval.log disk/eval
[ ! -e disk/eval/results.json ] || fail "a results.json was left" eval.log

# ---- prepare_data's dataset ------------------------------------------------
disk 64k; fill
code=0
"$build/bin/prepare_data" --task reverse --out disk/data --train-size 333 --valid-size 40 \
  > prepare.log 2>&1 || code=$?
[ "$code" != 0 ] || fail "prepare_data wrote a dataset on a full disk" prepare.log
grep -q "No space left on device" prepare.log || fail "prepare_data did not say the disk is full" prepare.log
[ ! -e disk/data/manifest.json ] || fail "a manifest was left behind" prepare.log
umount disk
echo "full disk at each stage: OK"
