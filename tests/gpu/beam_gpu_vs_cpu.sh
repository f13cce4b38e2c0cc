#!/usr/bin/env bash
# Evaluation with beam 4 on the GPU against the CPU, same checkpoint: the
# same hypotheses on >= 99% of the lines and BLEU within 0.5.
# Usage: beam_gpu_vs_cpu.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/gpu/gpu.bash"
require_gpu
source "$src/tests/script_lib.bash"
enter_scratch gpu-beam
"$build/bin/prepare_data" --task reverse --out data/reverse --seed 1 --train-size 20000 \
  --valid-size 200 --test-size 500 --min-len 4 --max-len 10 --symbols 20 >/dev/null
"$build/bin/trainer" --config "$src/configs/default.toml" --run.out_dir runs --train.max_steps 600 \
  --train.device cuda > train.log 2>&1 || fail "training on the GPU" train.log
for device in cuda cpu; do
  "$build/bin/evaluate" --run runs/default --split test --beam 4 --device "$device" \
    --out "eval-$device" > "eval-$device.log" 2>&1 || fail "evaluate on $device" "eval-$device.log"
done
"$python" - <<'PY'
import json
gpu, cpu = (open(f"eval-{d}/hypotheses.txt").read().splitlines() for d in ("cuda", "cpu"))
assert len(gpu) == len(cpu) == 500
same = sum(a == b for a, b in zip(gpu, cpu)) / len(cpu)
bleu = {d: json.load(open(f"eval-{d}/results.json"))["bleu"]["score"] for d in ("cuda", "cpu")}
print(f"beam 4: {same:.1%} identical hypotheses; BLEU gpu {bleu['cuda']:.2f} cpu {bleu['cpu']:.2f}")
assert same >= 0.99 and abs(bleu["cuda"] - bleu["cpu"]) <= 0.5
PY
echo "beam search on the GPU = on the CPU: OK"
