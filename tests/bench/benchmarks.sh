#!/usr/bin/env bash
# The benchmark table: the trainer against the PyTorch eager reference
# (../shared/peer/annotated_train.py) with the same model sizes, batch and
# threads, run one after the other in this one invocation, with the GEMM peak
# (build/bench/gemm_peak_bench) measured in the same run for MFU.
#
#   tests/bench/benchmarks.sh [size ...]        (sizes: default small base host; default: small base)
#   (host: paper-base's 6 + 6 layers and 8 heads at d 64, vocabulary 64, 16 target tokens
#   per step: the compute is negligible, so tokens/s measure what a step costs the host —
#   operator dispatch, autograd, the optimizer's loop, the data pipeline, logging —
#   which on a GPU is the time to queue the step's kernels)
#   PRECISIONS="fp32 bf16" MODES="1x1 1x2 2x1" STEPS=10 REPEAT=1 PEER=... BUILD_DIR=build OUT=runs/bench
#   TRAINER_ARGS="--dist.overlap true"     (more trainer options; default: overlap off, the
#                                           better setting for CPU ranks on one node)
#   PYPI_BUILD=build-cuda PYPI_PYTHON=.venv/torch/bin/python   (the current PyPI torch, when
#                                           present: scripts/build.sh --torch pypi)
#
# Beside Debian's LibTorch 1.13 and its PyTorch: the trainer built on the PyPI
# wheel's LibTorch and the reference on that PyTorch 2.x, eager and under
# torch.compile (tests/bench/peer_compiled.py), in a second table.
# For each size × precision × ranks x threads: target tokens/s of both, the
# trainer's step time split (data / forward / backward / communication wait /
# optimizer update, shares of wall time), MFU (matmul FLOPs per target token,
# the reference's count, × tokens/s ÷ the peak GEMM GFLOP/s of that dtype and
# that many cores), peak RSS per rank, and the scaling efficiency of 2 ranks.
# REPEAT=n measures every row n times (the trainer and the references taking
# turns) and reports the medians (tokens/s; the split of the median run).
# Writes $OUT/benchmarks.md and $OUT/benchmarks.json (with machine info), and
# with 2 ranks the bus bandwidth of the MPI allreduce (build/bench/allreduce_bench).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
peer=$(realpath "${PEER:-$src/../shared/peer/annotated_train.py}")
precisions=${PRECISIONS:-"fp32 bf16"}
modes=${MODES:-"1x1 1x2 2x1"}   # ranks x threads
steps=${STEPS:-10}
repeat=${REPEAT:-1}
out=$(mkdir -p "${OUT:-$src/runs/bench}" && realpath "${OUT:-$src/runs/bench}")
work=$(mktemp -d /tmp/bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(small base)
source "$src/tests/bench/bench_lib.sh"
rows=$work/rows.jsonl
pypi_build=${PYPI_BUILD:-$src/build-cuda}
pypi_python=${PYPI_PYTHON:-$src/.venv/torch/bin/python}
pypi=false
[ -x "$pypi_build/bin/trainer" ] && [ -x "$pypi_python" ] && pypi=true

# trainer_row <impl> <size> <precision> <mode>: the last run's medians as a row.
trainer_row() {
  /usr/bin/python3 - "$work/runs/default/metrics.jsonl" "$@" >> "$rows" <<'PY'
import json, statistics, sys
metrics, impl, size, precision, mode = sys.argv[1:]
w = [json.loads(l) for l in open(metrics)][1:]   # the first window holds start-up
med = lambda f: statistics.median(f(r) for r in w)
print(json.dumps({"impl": impl, "size": size, "precision": precision, "mode": mode,
                  "tokens_per_s": med(lambda r: r["tokens_per_s"]),
                  "time_share": {k: med(lambda r: r["time_share"][k]) for k in w[0]["time_share"]},
                  "peak_rss_mb": max(r["peak_rss_mb"] for r in w)}))
PY
}

# peer_row <impl> <python> <size> <precision> <mode> <reference command...>: its RESULT as a row.
peer_row() {
  local impl=$1 python=$2 size=$3 precision=$4 mode=$5; shift 5
  "$python" "$@" 2>"$work/peer.err" | sed -n 's/^RESULT //p' |
    /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
print(json.dumps({'impl': '$impl', 'size': '$size', 'precision': '$precision', 'mode': '$mode',
                  'tokens_per_s': r['agg_tok_per_s'], 'flop_per_token': r['train_flop_per_tgt_token'],
                  'peak_rss_mb': max(r.get('per_process_maxrss_mb', [r.get('maxrss_mb', 0)]))}))" >> "$rows" ||
    tail -3 "$work/peer.err" >&2
}

echo "GEMM peak (build/bench/gemm_peak_bench) ..." >&2
"$build/bench/gemm_peak_bench" 1024,2048 1,2 1 > "$work/peak.jsonl"

for size in "${sizes[@]}"; do
  read -r d h l ff v sents len <<<"${SIZE[$size]}"
  for precision in $precisions; do
    for mode in $modes; do
     for _ in $(seq "$repeat"); do
      ranks=${mode%x*}; threads=${mode#*x}
      echo "$size $precision $mode: trainer ..." >&2
      # shellcheck disable=SC2086
      run_trainer "$size" "$ranks" "$threads" --train.precision "$precision" --dist.overlap false \
        ${TRAINER_ARGS:-} && trainer_row trainer "$size" "$precision" "$mode"
      if $pypi; then
        echo "$size $precision $mode: trainer on the PyPI LibTorch ..." >&2
        # shellcheck disable=SC2086
        build=$pypi_build run_trainer "$size" "$ranks" "$threads" --train.precision "$precision" \
          --dist.overlap false ${TRAINER_ARGS:-} && trainer_row trainer-pypi "$size" "$precision" "$mode"
      fi
      echo "$size $precision $mode: PyTorch eager ..." >&2
      args=(--d-model "$d" --heads "$h" --layers "$l" --ff "$ff" --vocab "$v" --batch-sents "$sents"
            --src-len "$len" --tgt-len "$len" --steps "$steps" --threads "$threads")
      [ "$precision" = bf16 ] && args+=(--bf16)
      [ "$ranks" -gt 1 ] && args+=(--ddp --nproc "$ranks")
      peer_row pytorch /usr/bin/python3 "$size" "$precision" "$mode" "$peer" "${args[@]}"
      if $pypi; then
        echo "$size $precision $mode: PyTorch 2.x eager and compiled ..." >&2
        peer_row pytorch2 "$pypi_python" "$size" "$precision" "$mode" "$peer" "${args[@]}"
        peer_row pytorch2-compile "$pypi_python" "$size" "$precision" "$mode" \
          "$src/tests/bench/peer_compiled.py" "$peer" "${args[@]}"
      fi
     done
    done
  done
done

/usr/bin/python3 - "$work/peak.jsonl" "$rows" "$out" "$build" <<'PY'
import json, os, platform, subprocess, sys, time
peak_file, rows_file, out, build = sys.argv[1:]
peaks = [json.loads(l) for l in open(peak_file)]
peak = {}  # (dtype, threads) -> best GFLOP/s over sizes
for p in peaks:
    peak[(p["dtype"], p["threads"])] = max(peak.get((p["dtype"], p["threads"]), 0), p["gflops_best"])
runs = {}  # (impl, size, precision, mode) -> its repeats, in order
for r in map(json.loads, open(rows_file)):
    runs.setdefault((r["impl"], r["size"], r["precision"], r["mode"]), []).append(r)
rows = []
for repeats in runs.values():  # the median run by tokens/s (the lower middle one of an even count)
    middle = sorted(repeats, key=lambda r: r["tokens_per_s"])[(len(repeats) - 1) // 2]
    rows.append(dict(middle, tokens_per_s_runs=[r["tokens_per_s"] for r in repeats]))
flop = {r["size"]: r["flop_per_token"] for r in rows if "flop_per_token" in r}
for r in rows:
    ranks, threads = map(int, r["mode"].split("x"))
    pk = peak.get((r["precision"], ranks * threads))
    r["mfu"] = r["tokens_per_s"] * flop[r["size"]] / (pk * 1e9) if pk and r["size"] in flop else None
def find(impl, size, precision, mode):
    return next((r for r in rows if (r["impl"], r["size"], r["precision"], r["mode"]) == (impl, size, precision, mode)), None)
for r in rows:
    one = find(r["impl"], r["size"], r["precision"], "1x1")
    ranks, threads = map(int, r["mode"].split("x"))
    r["scaling_efficiency"] = r["tokens_per_s"] / (ranks * threads * one["tokens_per_s"]) if one and r["mode"] != "1x1" else None
    if r["impl"] == "trainer":
        peer = find("pytorch", r["size"], r["precision"], r["mode"])
        r["vs_pytorch"] = r["tokens_per_s"] / peer["tokens_per_s"] if peer else None
        fp32 = find("trainer", r["size"], "fp32", r["mode"])
        r["vs_own_fp32"] = r["tokens_per_s"] / fp32["tokens_per_s"] if fp32 and r["precision"] != "fp32" else None

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
torch_version = subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"],
                               capture_output=True, text=True).stdout.strip()
machine = {"cpu": cpu, "cores": os.cpu_count(), "isa": [f for f in flags if f.startswith(("avx512_bf16", "amx", "avx512f"))],
           "kernel": platform.release(), "load_average": os.getloadavg(), "torch": torch_version,
           "blas": os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"),
           "date": time.strftime("%Y-%m-%d %H:%M:%S")}
result = {"machine": machine, "gemm_peak": peaks, "rows": rows}
json.dump(result, open(os.path.join(out, "benchmarks.json"), "w"), indent=1)

pct = lambda x: "–" if x is None else f"{100 * x:.0f}%"
num = lambda x, f="{:.2f}": "–" if x is None else f.format(x)
lines = [f"Machine: {cpu}, {machine['cores']} cores ({' '.join(machine['isa'])}), torch {torch_version}, "
         f"BLAS {machine['blas']}, load average {machine['load_average'][0]:.1f} at the end, {machine['date']}.",
         "GEMM peak (GFLOP/s, best of N = 1024, 2048): " +
         ", ".join(f"{d} × {t} thread(s) {v:.0f}" for (d, t), v in sorted(peak.items())), "",
         "| size | precision | ranks × threads | trainer tok/s | PyTorch tok/s | trainer / PyTorch | bf16 / own fp32 "
         "| data | forward | backward | comm wait | update | MFU trainer / PyTorch | peak RSS MiB per rank trainer / PyTorch "
         "| scaling eff. trainer / PyTorch |",
         "|" + "---|" * 15]
for r in rows:
    if r["impl"] != "trainer":
        continue
    p = find("pytorch", r["size"], r["precision"], r["mode"]) or {}
    s = r["time_share"]
    lines.append(f"| {r['size']} | {r['precision']} | {r['mode'].replace('x', ' × ')} | {r['tokens_per_s']:.0f} | "
                 f"{num(p.get('tokens_per_s'), '{:.0f}')} | {num(r['vs_pytorch'])}× | {num(r['vs_own_fp32'])}"
                 f"{'×' if r['vs_own_fp32'] else ''} | {pct(s['data'])} | {pct(s['forward'])} | {pct(s['backward'])} | "
                 f"{pct(s['comm_wait'])} | {pct(s['update'])} | {pct(r['mfu'])} / {pct(p.get('mfu'))} | "
                 f"{r['peak_rss_mb']:.0f} / {num(p.get('peak_rss_mb'), '{:.0f}')} | "
                 f"{pct(r['scaling_efficiency'])} / {pct(p.get('scaling_efficiency'))} |")
if any(len(r["tokens_per_s_runs"]) > 1 for r in rows):
    lines += ["", "Every run (tokens/s; the table has the median):", ""]
    lines += [f"- {r['impl']} {r['size']} {r['precision']} {r['mode'].replace('x', ' × ')}: "
              + ", ".join(f"{x:.0f}" for x in r["tokens_per_s_runs"]) for r in rows]
impls = [("trainer", "trainer, LibTorch 1.13"), ("trainer-pypi", "trainer, PyPI LibTorch"),
         ("pytorch", "PyTorch 1.13 eager"), ("pytorch2", "PyTorch 2.x eager"),
         ("pytorch2-compile", "PyTorch 2.x compile")]
if any(r["impl"] == "trainer-pypi" for r in rows):
    lines += ["", "Both LibTorch sources side by side (target tokens/s; × = against PyTorch 2.x eager):", "",
              "| size | precision | ranks × threads | " + " | ".join(n for _, n in impls) + " |",
              "|" + "---|" * (3 + len(impls))]
    for r in rows:
        if r["impl"] != "trainer":
            continue
        base = find("pytorch2", r["size"], r["precision"], r["mode"])
        cells = []
        for impl, _ in impls:
            x = find(impl, r["size"], r["precision"], r["mode"])
            ratio = f" ({x['tokens_per_s'] / base['tokens_per_s']:.2f}×)" if x and base else ""
            cells.append(f"{x['tokens_per_s']:.0f}{ratio}" if x else "–")
        lines.append(f"| {r['size']} | {r['precision']} | {r['mode'].replace('x', ' × ')} | " + " | ".join(cells) + " |")
open(os.path.join(out, "benchmarks.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"\n(written to {out}/benchmarks.md and benchmarks.json)")
PY
if [[ " $modes " == *" 2x1 "* ]]; then  # what the 2-rank rows' communication moves at
  { echo; bash "$src/scripts/mpirun.sh" -np 2 --bind-to core "$build/bench/allreduce_bench"; } |
    tee -a "$out/benchmarks.md"
fi
