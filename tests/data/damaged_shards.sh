#!/usr/bin/env bash
# A damaged shard stops the programs that read it, naming the shard, the
# dataset in it and the example, instead of training or scoring on garbage:
#   - evaluate on a test shard with a flipped byte in its target tokens;
#   - the trainer, resuming, on a training shard damaged the same way: it
#     exits non-zero and writes no checkpoint after the damage.
# The byte is found with h5py (the chunk holding the tokens), not hard-coded.
# Usage: damaged_shards.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch damaged-shards

# Flips a byte of <dataset>'s first chunk in <shard>, 4 bytes (one int32) in.
damage() {  # <shard> <dataset>
  "$python" - "$1" "$2" <<'PY'
import sys, h5py
path, name = sys.argv[1:]
with h5py.File(path, "r") as f:
    offset = f[name].id.get_chunk_info_by_coord((0,)).byte_offset + 4
with open(path, "r+b") as f:
    f.seek(offset)
    byte = f.read(1)[0]
    f.seek(offset)
    f.write(bytes([byte ^ 0xFF]))
PY
}

# <log> must say which shard (as the run names it), dataset and example failed its checksum.
expect_named() {  # <log> <shard> <dataset>
  for part in "shard $2" "dataset $3" "Fletcher-32 checksum"; do
    grep -qF "$part" "$1" || fail "the error does not name '$part'" "$1"
  done
  grep -qE "example [0-9]+ \(id [0-9]+\)" "$1" || fail "the error does not name the example" "$1"
}

prepare_tiny data 30
trainer_run tiny 1 --train.max_steps 4 --train.save_every 2 || fail "training failed" tiny.log
checkpoints=$(ls runs/tiny/checkpoints)

damage data/test-00000.h5 tgt/tokens
status=0
"$build/bin/evaluate" --run runs/tiny --split test --threads 1 > eval.json 2> eval.log || status=$?
[ "$status" -eq 1 ] || fail "evaluate on a damaged test shard: exit $status, expected 1" eval.log
expect_named eval.log "$PWD/data/test-00000.h5" tgt/tokens  # data.dir is saved absolute

damage data/train-00000.h5 tgt/tokens
status=0
trainer_run tiny 1 --train.max_steps 8 --train.save_every 2 || status=$?
[ "$status" -ne 0 ] || fail "the trainer trained on a damaged shard (exit 0)" tiny.log
expect_named tiny.log "$PWD/data/train-00000.h5" tgt/tokens
[ "$(ls runs/tiny/checkpoints)" = "$checkpoints" ] || fail "a checkpoint was written after the damage" tiny.log
echo "damaged shards: OK"
