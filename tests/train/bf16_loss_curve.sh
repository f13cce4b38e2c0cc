#!/usr/bin/env bash
# bf16 mixed precision (train.precision = "bf16") follows the fp32 loss curve:
# the embedded default, shortened to 300 steps, trained side by side in fp32
# and bf16 from the same initialisation on the same batches; at every logged
# step (each the mean of 25 steps) the training loss of bf16 must be within
# 0.05 + 3% of fp32's, and both must have learned (loss down by more than half).
# Usage: bf16_loss_curve.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch bf16-loss-curve

"$build/bin/prepare_data" --task reverse --out data/reverse --seed 1 \
  --train-size 20000 --valid-size 0 --test-size 0 --min-len 4 --max-len 10 --symbols 20 >/dev/null
for precision in fp32 bf16; do
  timeout 600 "$build/bin/trainer" --config "$src/configs/default.toml" --run.out_dir runs \
    --run.name "$precision" --train.precision "$precision" --train.threads 1 \
    --train.max_steps 300 --train.log_every 25 --train.save_every 0 --train.valid_every 0 \
    --train.save_every_minutes 0 > "$precision.log" 2>&1 &
done
wait %1 || fail "fp32 run failed" fp32.log
wait %2 || fail "bf16 run failed" bf16.log

/usr/bin/python3 - <<'PY'
import json
curve = {p: [json.loads(l) for l in open(f"runs/{p}/metrics.jsonl")] for p in ("fp32", "bf16")}
assert [r["step"] for r in curve["fp32"]] == [r["step"] for r in curve["bf16"]], "different logged steps"
print("| step | fp32 loss | bf16 loss | difference |\n|---|---|---|---|")
worst = 0.0
for a, b in zip(curve["fp32"], curve["bf16"]):
    diff = abs(a["loss"] - b["loss"])
    worst = max(worst, diff / (0.05 + 0.03 * a["loss"]))
    print(f"| {a['step']} | {a['loss']:.4f} | {b['loss']:.4f} | {diff:.4f} |")
for p, rows in curve.items():
    assert rows[-1]["loss"] < 0.5 * rows[0]["loss"], f"{p} did not learn: {rows[0]['loss']} -> {rows[-1]['loss']}"
assert worst <= 1.0, f"bf16 strays from fp32 beyond 0.05 + 3% (worst at {worst:.2f}x the tolerance)"
print(f"bf16 within tolerance of fp32 at every logged step (worst {worst:.2f}x the tolerance)")
PY
echo "bf16 loss curve: OK"
