#!/usr/bin/env bash
# What a checkpoint costs a multi-rank run, side by side with an earlier
# trainer: `mpirun -np 2 trainer` on the paper's base model (d_model 512,
# 6 + 6 layers, a shared vocabulary of 37 000: 757 MB with Adam's moments;
# the sharded update, the default with MPI), small batches, one thread a rank.
# Each build trains twice, logging every K steps: once saving every K steps,
# once saving only at the end. An interval of the first run holds K steps and
# one save, of the second K steps only; the difference of their medians is
# what a save costs the training — the stall, and the background writers'
# share of this machine's cores. Printed per build: the medians, the cost
# per save, the trainer's own "snapshot in" figure, and each rank's peak
# RSS in both runs (what a save adds to a rank's memory).
#
#   tests/bench/checkpoint_stall_bench.sh   (BUILD_DIR=build BASELINE_BUILD=<earlier build>
#                                            WORK=/tmp/stall K=10 INTERVALS=8)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
baseline=${BASELINE_BUILD:+$(realpath "$BASELINE_BUILD")}
k=${K:-10}
intervals=${INTERVALS:-8}
work=${WORK:-$(mktemp -d /tmp/bench-stall.XXXXXX)}
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

data=$work/copy-37k
[ -f "$data/manifest.json" ] ||
  "$build/bin/prepare_data" --task copy --out "$data" --seed 1 --train-size 20000 \
    --valid-size 10 --test-size 0 --min-len 4 --max-len 12 --symbols 37000 > "$work/prepare.log"

# train <build> <name> <save_every>; each rank under a Python parent that
# writes the rank's peak RSS (getrusage of its child) to <name>.rss.<rank>.
peak="import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); \
open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)"
train() {
  rm -rf "$work/runs/$2"
  mpirun -np 2 --bind-to none bash -c \
    "exec /usr/bin/python3 -c \"$peak\" $work/$2.rss.\$OMPI_COMM_WORLD_RANK \"\$@\"" rank \
    "$1/bin/trainer" --config "$src/configs/base.toml" \
    --data.dir "$data" --run.out_dir "$work/runs" --run.name "$2" --train.threads 1 \
    --train.max_steps $((k * (intervals + 1))) --train.log_every "$k" --train.save_every "$3" \
    --train.valid_every 0 --train.save_every_minutes 0 --train.keep_last 2 \
    --data.batch_tokens 256 --data.max_len 16 --train.precision fp32 > "$work/$2.log" 2>&1 ||
    { echo "$2: the trainer failed; see $work/$2.log" >&2; exit 1; }
}

echo "| trainer | interval of $k steps, no save (median s) | with a save (median s) | a save costs the training (s) | snapshot (logged, median s) | peak RSS MiB per rank, no save | with saves |"
echo "|---|---|---|---|---|---|---|"
for which in ${baseline:+baseline} this; do
  dir=$build; [ "$which" = baseline ] && dir=$baseline
  train "$dir" "$which-off" 0
  train "$dir" "$which-on" "$k"
  /usr/bin/python3 - "$work" "$which" <<'PY'
import json, re, statistics, sys
work, which = sys.argv[1:]
def intervals(name):  # wall seconds of each log interval after the first
    rows = [json.loads(line) for line in open(f"{work}/runs/{name}/metrics.jsonl")]
    return [b["elapsed_s"] - a["elapsed_s"] for a, b in zip(rows, rows[1:])]
off, on = statistics.median(intervals(f"{which}-off")), statistics.median(intervals(f"{which}-on"))
snapshots = [float(s) for s in re.findall(r"snapshot in ([0-9.]+) s", open(f"{work}/{which}-on.log").read())]
def peaks(name):
    return " / ".join(f"{int(open(f'{work}/{name}.rss.{r}').read()) / 1024:.0f}" for r in range(2))
print(f"| {which} | {off:.2f} | {on:.2f} | {on - off:.2f} | {statistics.median(snapshots[1:]):.2f} "
      f"| {peaks(f'{which}-off')} | {peaks(f'{which}-on')} |")
PY
done
