#!/usr/bin/env bash
# Three prepare_data started at once on one --out (a Slurm array, a job
# submitted twice): exactly one publishes and exits 0, the others exit 1
# saying the directory is taken, and the dataset there is the winner's whole
# (its seed in the manifest, every shard verifies), with no temporary
# directory left. Whichever check refuses the losers (the one at the start,
# or the rename at the end), the outcome is the same.
# Usage: concurrent_prepare.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch concurrent-prepare

pids=()
for seed in 1 2 3; do
  "$build/bin/prepare_data" --task copy --out same --train-size 100000 --seed "$seed" \
    > "prepare$seed.log" 2>&1 & pids+=($!)
done
winners=()
for seed in 1 2 3; do
  status=0; wait "${pids[seed - 1]}" || status=$?
  case $status in
    0) winners+=("$seed") ;;
    1) grep -qE "output directory same (exists and is not empty|was filled by another prepare_data)" \
         "prepare$seed.log" || fail "prepare $seed: refused without saying why" "prepare$seed.log" ;;
    *) fail "prepare $seed: exit $status" "prepare$seed.log" ;;
  esac
done
[ "${#winners[@]}" = 1 ] || fail "${#winners[@]} of 3 prepare_data exited 0 on one --out"
grep -q -- "--seed ${winners[0]}\"" same/manifest.json || fail "the dataset is not the winner's"
"$python" - <<'PY'
import hashlib, json
m = json.load(open("same/manifest.json"))
for split in m["splits"].values():
    for shard in split["shards"]:
        assert hashlib.sha256(open(f"same/{shard['file']}", "rb").read()).hexdigest() == shard["sha256"], shard
PY
leftovers=$(ls -d same.* 2>/dev/null || true)
[ -z "$leftovers" ] || fail "left behind: $leftovers"
echo "concurrent prepare: seed ${winners[0]} published, the others refused"
