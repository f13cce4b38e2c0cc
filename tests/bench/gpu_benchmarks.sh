#!/usr/bin/env bash
# The GPU benchmark table (one GPU): the trainer against the PyTorch GPU
# references (gpu_peer.py: --impl annotated, --impl fast, --impl fast
# --compile) on the paper-base model (d 512, 6 + 6 layers, vocabulary 32k),
# one after the other in this one invocation, for each target tokens per
# step × precision (fp32 = IEEE, tf32 = fp32 with TF32 matrix products, bf16).
#
#   tests/bench/gpu_benchmarks.sh                # on a machine with a GPU
#   TOKENS="10240 32768 65536" PRECISIONS="fp32 tf32 bf16" STEPS=40 OUT=runs/gpu-bench
#   PEERS="annotated|fast|fast --compile"        # the peers' --impl, |-separated ("": none)
#   BUILD_DIR=build-cuda PYTHON=.venv/torch/bin/python
#   PEER_DIR=.gpu-kit/peer                       # default: that (scripts/gpu_kit.sh), else
#                                                # ../shared/peer; without one, no peers
#   PEAK_TFLOPS="fp32=67 tf32=495 bf16=989"     # when the GPU is not one of the known ones below
#   DRY_RUN=1 tests/bench/gpu_benchmarks.sh      # without a GPU: the default model on the CPU,
#                                                # the peers only compiled: the script end to end
#
# Per row: target tokens/s (trainer: median of its log windows, the first
# left out; peers: median CUDA-synchronised step), the trainer's ratio to each
# peer, MFU against the published dense peak of the GPU's tensor cores (the
# FLOPs per target token are the peer's count), peak GPU memory (trainer: the
# caching allocator's peak, metrics.jsonl peak_gpu_mb; peers: max_memory_allocated),
# and the trainer's phase shares (CUDA events on a GPU). One more row per
# tokens × precision, "model step, no data loading": the same model, loss and
# Adam on batches already on the device (bench/train_step_bench, synchronised
# per phase); the trainer's ratio to it is what data loading and the host
# cost the trainer (1.00: all hidden). A second table: the training loss
# alone on the generator's [tokens, vocabulary] logits, forward and backward,
# beside LibTorch's cross_entropy with label smoothing (bench/loss_bench; fp32
# and bf16 logits). Writes $OUT/gpu_benchmarks.md and $OUT/gpu_benchmarks.json
# at the end, and each row to $OUT/rows.jsonl the moment it is measured (a run
# cut off keeps those).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build-cuda}")
python=${PYTHON:-$src/.venv/torch/bin/python}
peer_dir=${PEER_DIR:-$src/.gpu-kit/peer}
[ -n "${PEER_DIR:-}" ] || [ -f "$peer_dir/gpu_peer.py" ] || peer_dir=$src/../shared/peer
IFS='|' read -ra peers <<<"${PEERS-annotated|fast|fast --compile}"
if [ ${#peers[@]} -gt 0 ] && [ ! -f "$peer_dir/gpu_peer.py" ]; then
  echo "no PyTorch peer in $peer_dir (PEER_DIR; scripts/gpu_kit.sh): the trainer alone" >&2
  peers=()
fi
dry=${DRY_RUN:-0}
out=$(mkdir -p "${OUT:-$src/runs/gpu-bench}" && realpath "${OUT:-$src/runs/gpu-bench}")
work=$(mktemp -d /tmp/gpu-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
source "$src/tests/bench/bench_lib.sh"
if ((dry)); then
  size=default device=cpu tokens=${TOKENS:-"480 960"} precisions=${PRECISIONS:-"fp32 bf16"}
  steps=${STEPS:-8}
else
  size=base device=cuda tokens=${TOKENS:-"10240 32768 65536"} precisions=${PRECISIONS:-"fp32 tf32 bf16"}
  steps=${STEPS:-40}
fi
read -r d h l ff v _ len <<<"${SIZE[$size]}"
rows=$out/rows.jsonl loss_rows=$out/loss.jsonl
: > "$rows"
: > "$loss_rows"

trainer_row() {  # <tokens> <precision>: the run's medians as a row
  "$python" - "$work/runs/default/metrics.jsonl" "$@" >> "$rows" <<'PY'
import json, statistics, sys
metrics, tokens, precision = sys.argv[1:]
w = [json.loads(l) for l in open(metrics)][1:]   # the first window holds start-up
med = lambda f: statistics.median(f(r) for r in w)
print(json.dumps({"impl": "trainer", "tokens": int(tokens), "precision": precision,
                  "tokens_per_s": med(lambda r: r["tokens_per_s"]),
                  "time_share": {k: med(lambda r: r["time_share"][k]) for k in w[0]["time_share"]},
                  "peak_gpu_mb": max(r.get("peak_gpu_mb", 0) for r in w)}))
PY
}

peer_row() {  # <tokens> <precision> <gpu_peer.py args...>: its RESULT as a row
  local tokens=$1 precision=$2; shift 2
  local tf32=0; [ "$precision" = tf32 ] && tf32=1
  TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=$tf32 "$python" "$peer_dir/gpu_peer.py" "$@" 2> "$work/peer.err" |
    sed -n 's/^RESULT //p' | "$python" -c "
import json, sys
r = json.load(sys.stdin)
print(json.dumps({'impl': r['impl'], 'tokens': $tokens, 'precision': '$precision',
                  'tokens_per_s': r['tok_per_s'], 'flop_per_token': r['tflops'] * 1e12 / r['tok_per_s'],
                  'peak_gpu_mb': r['peak_gpu_mib'], 'gpu': r['gpu']}))" >> "$rows" ||
    tail -3 "$work/peer.err" >&2
}

step_row() {  # <tokens> <precision> <sentences>: train_step_bench's step as a row
  "$build/bench/train_step_bench" "$size" "$(nproc)" "$2" "$steps" "" "$device" "$3" |
    "$python" -c "
import json, sys
r = json.loads(sys.stdin.readline())
print(json.dumps({'impl': 'model step, no data loading', 'tokens': $1, 'precision': '$2',
                  'tokens_per_s': r['tokens_per_s'], 'peak_gpu_mb': 0}))" >> "$rows"
}

for t in $tokens; do
  sents=$((t / len))
  for precision in $precisions; do
    echo "$t tokens/step, $precision: trainer ..." >&2
    tf32=false; [ "$precision" = tf32 ] && tf32=true  # fp32 is IEEE (train.tf32 defaults to true)
    args=(--train.device "$device" --train.precision "${precision/tf32/fp32}" --train.tf32 "$tf32")
    SENTENCES=$sents run_trainer "$size" 1 "$(nproc)" "${args[@]}" && trainer_row "$t" "$precision"
    echo "$t tokens/step, $precision: model step, no data loading ..." >&2
    step_row "$t" "$precision" "$sents"
    if [ "$precision" != tf32 ]; then
      echo "$t tokens/step, $precision: the loss alone ..." >&2
      "$build/bench/loss_bench" "$t" "$v" "$precision" "$steps" "$device" "$(nproc)" >> "$loss_rows"
    fi
    if ((dry)); then  # the peers need CUDA: compiled only, so that a broken file shows here
      [ ${#peers[@]} -eq 0 ] || "$python" -m py_compile "$peer_dir/gpu_peer.py" "$peer_dir/annotated_train.py"
      continue
    fi
    peer=(--d-model "$d" --heads "$h" --layers "$l" --ff "$ff" --vocab "$v" --batch-sents "$sents"
          --len "$len" --steps "$steps")
    [ "$precision" = bf16 ] && peer+=(--bf16)
    for impl in "${peers[@]}"; do
      echo "$t tokens/step, $precision: PyTorch --impl $impl ..." >&2
      # shellcheck disable=SC2086
      peer_row "$t" "$precision" "${peer[@]}" --impl $impl
    done
  done
done

"$python" - "$rows" "$out" "$dry" "$loss_rows" <<'PY'
import json, os, sys, time
rows_file, out, dry, loss_file = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
rows = [json.loads(l) for l in open(rows_file)]
loss = [json.loads(l) for l in open(loss_file)]
gpu = "CPU (dry run)" if dry else next((r["gpu"] for r in rows if "gpu" in r), "?")
# Published dense tensor-core peaks, TFLOP/s (NVIDIA data sheets; SXM parts).
published = {"H100": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4},
             "H200": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4},
             "A100": {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0}}
peak = next((p for name, p in published.items() if name in gpu), None)
if os.environ.get("PEAK_TFLOPS"):
    peak = {k: float(x) for k, x in (kv.split("=") for kv in os.environ["PEAK_TFLOPS"].split())}
flop = next((r["flop_per_token"] for r in rows if "flop_per_token" in r), None)
for r in rows:
    pk = peak.get(r["precision"]) if peak else None
    r["mfu"] = r["tokens_per_s"] * flop / (pk * 1e12) if pk and flop else None
    if r["impl"] == "trainer":
        r["vs"] = {p["impl"]: r["tokens_per_s"] / p["tokens_per_s"] for p in rows
                   if p["impl"] != "trainer" and (p["tokens"], p["precision"]) == (r["tokens"], r["precision"])}
json.dump({"gpu": gpu, "peak_tflops": peak, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows,
           "loss": loss},
          open(os.path.join(out, "gpu_benchmarks.json"), "w"), indent=1)
num = lambda x, f="{:.2f}": "–" if x is None else f.format(x)
lines = [f"GPU: {gpu}; MFU against {peak or 'no known peak (PEAK_TFLOPS)'} TFLOP/s dense",
         "", "| tokens/step | precision | impl | tok/s | trainer / it | MFU | peak GPU MiB | trainer phases |",
         "|---|---|---|---|---|---|---|---|"]
for r in rows:
    trainer = next((t for t in rows if t["impl"] == "trainer" and (t["tokens"], t["precision"]) == (r["tokens"], r["precision"])), None)
    ratio = trainer["vs"].get(r["impl"]) if trainer and r["impl"] != "trainer" else None
    phases = " ".join(f"{k} {100 * x:.0f}%" for k, x in r.get("time_share", {}).items())
    lines.append(f"| {r['tokens']} | {r['precision']} | {r['impl']} | {r['tokens_per_s']:.0f} | {num(ratio)}"
                 f" | {num(r['mfu'], '{:.1%}')} | {num(r['peak_gpu_mb'] or None, '{:.0f}')} | {phases} |")
lines += ["", "The loss alone (ms per forward, backward; LibTorch: cross_entropy with label smoothing)", "",
          "| tokens | logits | ours fwd | ours bwd | LibTorch fwd | LibTorch bwd | ours / LibTorch |",
          "|---|---|---|---|---|---|---|"]
for r in loss:
    lines.append(f"| {r['tokens']} | {r['dtype']} | {r['ours_forward_ms']:.2f} | {r['ours_backward_ms']:.2f}"
                 f" | {r['libtorch_forward_ms']:.2f} | {r['libtorch_backward_ms']:.2f} | {r['ours_over_libtorch']:.2f} |")
open(os.path.join(out, "gpu_benchmarks.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
