#!/usr/bin/env bash
# Exact resume. Same world size (2 ranks, dropout 0.1): stopping at step k and
# resuming gives bitwise the parameters and logged losses of an uninterrupted
# run, for k at a log boundary, mid-log-interval, right after a validation and
# mid-epoch. Another world size (2 -> 1, 2 -> 3, 1 -> 3; dropout 0): the same
# trajectory within float tolerance, because the cursor counts global batches;
# 2 -> 3 reads the two ranks' optimizer parts into three shards, and the parts
# (read by torch.load) assemble to the moments one rank saved whole.
# Across world sizes the ranks' shares of a batch are summed in another
# order: float32 rounding (1e-4 for the optimizer's moments, 1e-5 for the
# trajectories). ACROSS_SIZES=0 leaves that part out (tests/gpu/
# exact_resume_gpu.sh, in 16-bit precisions, where a world size's own
# rounding is what tests/gpu/shared_gpu_invariance.sh bounds).
# Usage: exact_resume.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch resume-exact
prepare_tiny data

# 333 examples are ~9 global batches per epoch: 14 steps cross an epoch end.
opts=(--train.max_steps 14 --train.save_every 1 --train.keep_last 20 --train.valid_every 5
      --train.log_every 2 --model.dropout 0.1)
trainer_run full 2 "${opts[@]}" || fail "uninterrupted run" full.log
for k in 4 5 7 11; do
  trainer_run "from$k" 2 "${opts[@]}" --resume "runs/full/checkpoints/step_$(printf %08d $k)" \
    || fail "resume from step $k" "from$k.log"
  grep -q "resuming from .*step_$(printf %08d $k) (step $k" "from$k.log" || fail "did not resume at $k" "from$k.log"
done

"$python" - <<'PY'
import json, torch

def model(run):
    return torch.load(f"runs/{run}/checkpoints/latest/model.pt")

def ledger(run):
    return json.load(open(f"runs/{run}/checkpoints/latest/state.json"))["examples_ledger"]

def rows(run, name="metrics.jsonl"):
    return {r["step"]: r for r in map(json.loads, open(f"runs/{run}/{name}"))}

full, full_rows, full_valid = model("full"), rows("full"), rows("full", "valid.jsonl")
for k in (4, 5, 7, 11):
    run = f"from{k}"
    resumed = model(run)
    assert all(torch.equal(full[n], resumed[n]) for n in full), f"{run}: parameters differ"
    assert len(ledger(run)) == 64 and ledger(run) == ledger("full"), f"{run}: examples ledger differs"
    got = rows(run)
    assert got and min(got) > k, (run, sorted(got))
    for step, row in got.items():
        for key in ("loss", "nll", "grad_norm", "lr"):
            assert row[key] == full_rows[step][key], (run, step, key, row[key], full_rows[step][key])
    for step, row in rows(run, "valid.jsonl").items():
        assert row["loss"] == full_valid[step]["loss"], (run, step)
    print(f"resume at step {k}: parameters bitwise equal, {len(got)} logged rows identical")
PY
[ "${ACROSS_SIZES:-1}" = 1 ] || { echo "exact resume (same world size): OK"; exit 0; }

# Across world sizes, dropout 0.
opts0=(--train.max_steps 12 --train.save_every 4 --model.dropout 0)
trainer_run w2 2 "${opts0[@]}" || fail "2-rank run" w2.log
trainer_run w2to1 1 "${opts0[@]}" --resume runs/w2/checkpoints/step_00000004 || fail "2 -> 1" w2to1.log
trainer_run w2to3 3 "${opts0[@]}" --resume runs/w2/checkpoints/step_00000004 || fail "2 -> 3" w2to3.log
trainer_run w1 1 "${opts0[@]}" || fail "1-rank run" w1.log
trainer_run w1to3 3 "${opts0[@]}" --resume runs/w1/checkpoints/step_00000004 || fail "1 -> 3" w1to3.log

"$python" - <<'PY'
# Two ranks sharding the update write one optimizer part each; its pieces,
# put together by their "elements", are the moments one rank saved whole
# (the same global batches: equal within float tolerance).
import os, torch
step4 = "checkpoints/step_00000004"
files = sorted(f for f in os.listdir(f"runs/w2/{step4}") if f.startswith("optimizer"))
assert files == ["optimizer-00000-of-00002.pt", "optimizer-00001-of-00002.pt"], files
whole = torch.load(f"runs/w1/{step4}/optimizer.pt")
assembled = {}
for f in files:
    part = torch.load(f"runs/w2/{step4}/{f}")
    for name, t in part.items():
        param, field = name.rsplit(".", 1)
        if field == "step":
            assert int(t) == int(whole[name]), name
        elif field in ("exp_avg", "exp_avg_sq"):
            begin, end = (int(x) for x in part[param + ".elements"])
            flat = assembled.setdefault(name, torch.full((whole[name].numel(),), float("nan")))
            assert flat[begin:end].isnan().all(), f"{name}: elements {begin}..{end} twice"
            flat[begin:end] = t
assert sorted(assembled) == sorted(n for n in whole if not n.endswith(".step"))
rtol = 1e-4
differences = {}
for name, flat in assembled.items():
    expected = whole[name].reshape(-1)
    assert not flat.isnan().any(), f"{name}: elements missing from the parts"
    # Summed in another order: relative to the tensor's norm, not elementwise
    # (an element near zero may differ by more than its own size).
    differences[name] = ((flat - expected).norm() / expected.norm()).item()
worst = max(differences, key=differences.get)
assert differences[worst] < rtol, ("relative differences over", rtol,
                                   {n: d for n, d in differences.items() if d >= rtol})
print(f"2 ranks' optimizer parts assemble to 1 rank's optimizer.pt (relative difference "
      f"<= {differences[worst]:.1e}, {worst}; tolerance {rtol:.0e})")
PY
# another world size: float tolerance
for pair in "w2 w2to1" "w2 w2to3" "w1 w1to3"; do
  # shellcheck disable=SC2086  # two run names
  "$python" "$src/tests/trajectory.py" 1e-5 $pair
done
echo "exact resume: OK"
