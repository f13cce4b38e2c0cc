#!/usr/bin/env bash
# What a rank pays for the size of its training split: for each of SIZES
# training examples (default 1 M, 10 M, 50 M; a copy task of 4-12 symbols,
# shards of 100,000), `mpirun -np 2 trainer` on a small model, and per rank
#   - peak RSS (getrusage of each rank's process, from a Python parent),
#   - the growth of peak RSS per training example over the smallest size
#     (what the dataset index and batch plan cost a rank per example),
#   - the time from the launch to the first step's metrics row.
# With BASELINE_BUILD=<build dir of an earlier trainer> the same runs of that
# build beside each row (it reads the same datasets: it ignores the index).
# Also prepare_data's time per size, and the index's bytes on disk.
#
#   tests/bench/dataset_scale_bench.sh           (BUILD_DIR=build SIZES="1000000 10000000 50000000"
#                                                 BASELINE_BUILD=... WORK=/tmp/scale STEPS=3)
# The datasets take ~200 bytes an example on disk (~10 GB at 50 M) under WORK.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
baseline=${BASELINE_BUILD:+$(realpath "$BASELINE_BUILD")}
sizes=${SIZES:-"1000000 10000000 50000000"}
steps=${STEPS:-3}
work=${WORK:-$(mktemp -d /tmp/bench-scale.XXXXXX)}
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run <build> <data dir> <name>: "<peak RSS MiB of rank 0> <of rank 1> <seconds to the first step>"
run() {
  /usr/bin/python3 - "$@" "$src" "$work" "$steps" <<'PY'
import os, subprocess, sys, time
build, data, name, src, work, steps = sys.argv[1:]
out = os.path.join(work, "runs")
metrics = os.path.join(out, name, "metrics.jsonl")
subprocess.run(["rm", "-rf", os.path.join(out, name)], check=True)
rss = [os.path.join(work, f"{name}.rss.{r}") for r in range(2)]
# Each rank under a Python parent that writes the rank's peak RSS (getrusage of its child).
peak = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
        "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
        "sys.exit(code)")
command = ["mpirun", "-np", "2", "--bind-to", "none", "bash", "-c",
           f'exec /usr/bin/python3 -c "{peak}" {work}/{name}.rss.$OMPI_COMM_WORLD_RANK "$@"', "rank",
           f"{build}/bin/trainer", "--config", f"{src}/configs/default.toml", "--data.dir", data,
           "--run.out_dir", out, "--run.name", name, "--train.threads", "1",
           "--train.max_steps", steps, "--train.log_every", "1", "--train.save_every", "0",
           "--train.valid_every", "0", "--train.save_every_minutes", "0",
           "--data.batch_tokens", "1024", "--model.d_model", "32", "--model.d_ff", "64",
           "--model.heads", "2", "--model.encoder_layers", "1", "--model.decoder_layers", "1"]
start = time.time()
with open(os.path.join(work, f"{name}.log"), "w") as log:
    job = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    first = None
    while job.poll() is None:
        if first is None and os.path.exists(metrics) and os.path.getsize(metrics) > 0:
            first = time.time() - start
        time.sleep(0.05)
    if first is None and os.path.exists(metrics) and os.path.getsize(metrics) > 0:
        first = time.time() - start  # the run ended within the last poll
if job.returncode != 0:
    sys.exit(f"{name}: the trainer failed (exit {job.returncode}); see {work}/{name}.log")
peaks = [int(open(f).read().split()[-1]) / 1024 for f in rss]
print(f"{peaks[0]:.0f} {peaks[1]:.0f} {first if first is not None else float('nan'):.1f}")
PY
}

rows=$work/rows.txt
: > "$rows"
for n in $sizes; do
  data=$work/copy-$n
  if [ ! -f "$data/manifest.json" ]; then
    begin=$SECONDS
    "$build/bin/prepare_data" --task copy --out "$data" --seed 1 --train-size "$n" \
      --valid-size 100 --test-size 0 --min-len 4 --max-len 12 --symbols 20 > "$work/prepare-$n.log"
    prepare_s=$((SECONDS - begin))
  else
    prepare_s=nan  # prepared by an earlier run of this script
  fi
  [ -f "$data/train.index" ] || "$build/bin/prepare_data" --upgrade "$data" > /dev/null
  index_bytes=$(stat -c %s "$data/train.index")
  read -r r0 r1 first < <(run "$build" "$data" "new-$n")
  line="$n $prepare_s $index_bytes $r0 $r1 $first"
  if [ -n "$baseline" ]; then
    read -r b0 b1 bfirst < <(run "$baseline" "$data" "baseline-$n")
    line="$line $b0 $b1 $bfirst"
  fi
  echo "$line" | tee -a "$rows"
done

/usr/bin/python3 - "$rows" "${baseline:+yes}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
has_baseline = sys.argv[2] == "yes"
n0, *_ = rows[0]
base = {k: float(rows[0][k]) for k in (3, 4, 6, 7) if k < len(rows[0])}
def growth(row, k):  # MiB of peak RSS per example over the smallest size, in bytes
    n = int(row[0]) - int(n0)
    return "–" if n == 0 else f"{(float(row[k]) - base[k]) * 2**20 / n:.1f}"
print("\n| training examples | prepare_data s | index bytes / example (disk, shared by the node) | "
      "peak RSS MiB rank 0 / 1 | rank 0's RSS growth, bytes / example | first step s |"
      + (" before: peak RSS MiB rank 0 / 1 | before: rank 0's growth, bytes / example | before: first step s |" if has_baseline else ""))
print("|---|---|---|---|---|---|" + ("---|---|---|" if has_baseline else ""))
for r in rows:
    line = (f"| {int(r[0]):,} | {r[1]} | {int(r[2]) / int(r[0]):.1f} | {r[3]} / {r[4]} | "
            f"{growth(r, 3)} | {r[5]} |")
    if has_baseline:
        line += f" {r[6]} / {r[7]} | {growth(r, 6)} | {r[8]} |"
    print(line)
PY
