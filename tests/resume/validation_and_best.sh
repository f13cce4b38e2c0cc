#!/usr/bin/env bash
# Validation during training (2 ranks share the valid split): the best
# checkpoint by validation loss is kept beside the last K and `best` points to
# it; early stopping follows train.patience exactly, and does stop a run whose
# validation loss cannot improve; timed saves happen without step-based ones;
# validation loss is the same on 1 and 2 ranks.
# Usage: validation_and_best.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch resume-valid
prepare_tiny data

# A constant, high learning rate makes the validation loss wander, so that
# some checks do not improve.
opts=(--optim.schedule constant --optim.lr 0.5 --train.max_steps 100 --train.valid_every 2
      --train.patience 3 --train.save_every 0 --train.save_every_minutes 0.0002
      --train.keep_last 2 --train.log_every 10 --model.dropout 0)
trainer_run two 2 "${opts[@]}" || fail "2-rank run" two.log
trainer_run one 1 "${opts[@]}" --train.max_steps 4 || fail "1-rank run" one.log
# A learning rate of 1e-30 leaves every weight as it is (no update survives
# float32 rounding), so the validation loss never improves after the first
# check: patience 3 must stop the run at step 2 + 3 x 2 = 8, not 100.
trainer_run still 1 "${opts[@]}" --optim.lr 1e-30 || fail "run with a frozen model" still.log

"$python" - <<'PY'
import json, os, re
rows = [json.loads(l) for l in open("runs/two/valid.jsonl")]
log = open("two.log").read()
ckpt = "runs/two/checkpoints"

# the rule: stop at the first check that is the patience-th without improvement
best, since, stop_at = float("inf"), 0, None
for r in rows:
    if r["loss"] < best:
        best, best_step, since = r["loss"], r["step"], 0
    else:
        since += 1
    assert abs(r["best_loss"] - best) < 1e-12, r
    if since == 3:
        stop_at = r["step"]
        break
assert rows[-1]["step"] == (stop_at or 100), (stop_at, rows[-1])
assert ("early stop" in log) == (stop_at is not None)

# `best` -> the checkpoint of the lowest validation loss; it survives pruning
assert os.readlink(f"{ckpt}/best") == f"step_{best_step:08d}", (os.readlink(f"{ckpt}/best"), best_step)
steps = sorted(d for d in os.listdir(ckpt) if d.startswith("step_"))
assert f"step_{best_step:08d}" in steps
assert len(steps) == 2 + (f"step_{best_step:08d}" not in steps[-2:]), steps
# timed saves (save_every = 0): checkpoints between the validation improvements
saves = len(re.findall(r"checkpoint \S*runs/two/", log))  # the run's path is absolute
assert saves > sum(1 for l in log.splitlines() if "(new best)" in l)

# the shared validation equals the single-rank one at step 2 and 4
one = {r["step"]: r["loss"] for r in map(json.loads, open("runs/one/valid.jsonl"))}
for r in rows[:2]:
    assert abs(r["loss"] - one[r["step"]]) < 1e-6 * r["loss"], (r, one)

# the frozen model: the same loss at every check, and an early stop at step 8
still = [json.loads(l) for l in open("runs/still/valid.jsonl")]
assert [r["step"] for r in still] == [2, 4, 6, 8], f"no early stop at step 8: validations at {[r['step'] for r in still]}"
assert len({r["loss"] for r in still}) == 1, still
assert "early stop: 3 validations without improvement" in open("still.log").read()
assert os.readlink("runs/still/checkpoints/latest") == "step_00000008", os.readlink("runs/still/checkpoints/latest")
print(f"{len(rows)} validations, best {best:.4f} at step {best_step}, "
      f"{'early stop at step %d' % stop_at if stop_at else 'no early stop'}; kept {steps}; "
      f"frozen model: early stop at step 8")
PY
echo "validation and best checkpoint: OK"
