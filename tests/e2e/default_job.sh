#!/usr/bin/env bash
# End to end on the embedded default: prepare -> train on 2 MPI ranks ->
# evaluate, asserting the quality it reaches (>= 99% exact match on test)
# and that the checkpoint's weights load in Python's torch.
# Usage: default_job.sh <build dir> <source dir>
# E2E_RANKS (default 2) and TRAINER_EXTRA_ARGS (e.g. "--train.device cuda")
# run the same job elsewhere (tests/gpu/).
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
work=$(mktemp -d /tmp/e2e-default.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$build/bin/prepare_data" --task reverse --out data/reverse --seed 1 \
  --train-size 20000 --valid-size 500 --test-size 500 --min-len 4 --max-len 10 --symbols 20
read -ra extra <<<"${TRAINER_EXTRA_ARGS:-}"
bash "$src/scripts/mpirun.sh" -np "${E2E_RANKS:-2}" "$build/bin/trainer" --config "$src/configs/default.toml" \
  --run.out_dir "$work/runs" "${extra[@]}"
"$build/bin/evaluate" --run "$work/runs/default" --split test --out "$work/eval" > /dev/null

"$python" - "$work" <<'PY'
import json, sys, torch
work = sys.argv[1]
r = json.load(open(f"{work}/eval/results.json"))
print(f"exact match {r['exact_match']:.4f}, ppl {r['ppl']:.3f}, step {r['step']}")
assert r["exact_match"] >= 0.99, f"embedded default reached only {r['exact_match']:.4f} exact match"
hyps = open(f"{work}/eval/hypotheses.txt").read().splitlines()
assert len(hyps) == r["num_examples"] == 500, len(hyps)
sd = torch.load(f"{work}/runs/default/checkpoints/latest/model.pt", weights_only=True)
assert all(isinstance(v, torch.Tensor) for v in sd.values()) and len(sd) > 10
print(f"torch {torch.__version__} loaded {len(sd)} tensors, {sum(v.numel() for v in sd.values())} values")
PY
(cd "$work/runs/default/checkpoints/latest" && sha256sum -c --quiet SHA256SUMS)
test "$(wc -l < "$work/runs/default/metrics.jsonl")" -ge 10
echo "e2e default job: OK"
