#!/usr/bin/env bash
# The dataset's shards are checked by one rank of each node, each against its
# own node's view of the files (data_pipeline/node_check.h): a shard missing
# from the second node's view only (a node-local copy gone stale) stops the
# trainer and evaluate on 2 simulated nodes x 2 ranks before any step or
# score, every rank naming the shard and the rank and node that found it;
# with both views whole, the same commands run. A checkpoint damaged in the
# second node's view only (every file cut short) is read by rank 0 alone:
# evaluate on both nodes scores it as one process does, and the trainer
# resumes from it with the same parameters on every rank (rank 0 alone has
# read a checkpoint at resume since the trainer broadcasts it; evaluate's
# ranks read their own before).
# Usage: node_views.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-views
prepare_tiny data 40
trainer_run tiny 1 --train.max_steps 4 || fail "training" tiny.log
write_hostfile 2 2

# nodeb's view of data/: a copy without the training split's shard.
cp -r data data-nodeb
rm data-nodeb/train-00000.h5
export NODE_SHELL_VIEW_nodeb=$work/data-nodeb:$work/data
missing="rank 2 on nodeb: .*$work/data/train-00000.h5"
code=0
timeout 300 "${mpirun_nodes[@]}" "$build/bin/trainer" "${TINY[@]}" --data.dir "$work/data" \
  --run.out_dir "$work/runs" --run.name views --train.max_steps 4 > trainer.log 2>&1 || code=$?
[ "$code" != 0 ] || fail "the trainer ran with a shard missing on nodeb" trainer.log
[ "$(grep -c "$missing" trainer.log)" -ge 4 ] || fail "not every rank named nodeb's missing shard" trainer.log
! grep -q "\] step " trainer.log || fail "a step ran before the check" trainer.log
echo "trainer: a shard missing on nodeb only, named by every rank before any step:" \
  "$(grep -m1 -o "rank 2 on nodeb: .*" trainer.log)"

code=0
timeout 300 "${mpirun_nodes[@]}" "$build/bin/evaluate" --run "$work/runs/tiny" --data "$work/data" \
  --split train --threads 1 --out "$work/scores" > evaluate.log 2>&1 || code=$?
[ "$code" != 0 ] || fail "evaluate ran with a shard missing on nodeb" evaluate.log
[ "$(grep -c "$missing" evaluate.log)" -ge 4 ] || fail "not every rank named nodeb's missing shard" evaluate.log
echo "evaluate: the same"

unset NODE_SHELL_VIEW_nodeb
timeout 300 "${mpirun_nodes[@]}" "$build/bin/trainer" "${TINY[@]}" --data.dir "$work/data" \
  --run.out_dir "$work/runs" --run.name views --train.max_steps 4 > whole.log 2>&1 ||
  fail "the trainer on whole views" whole.log
timeout 300 "${mpirun_nodes[@]}" "$build/bin/evaluate" --run "$work/runs/tiny" --data "$work/data" \
  --split train --threads 1 --out "$work/scores" > whole-evaluate.log 2>&1 ||
  fail "evaluate on whole views" whole-evaluate.log

# nodeb's view of the step-4 checkpoint: every file cut short.
ckpt=$(realpath "$work/runs/views/checkpoints/step_00000004")
[ -d "$ckpt" ] || fail "no step-4 checkpoint of the views run" whole.log
cp -r "$ckpt" ckpt-nodeb
for f in ckpt-nodeb/*; do truncate -s 10 "$f"; done
export NODE_SHELL_VIEW_nodeb=$work/ckpt-nodeb:$ckpt
timeout 300 "$build/bin/evaluate" --run "$work/runs/views" --checkpoint "$ckpt" --data "$work/data" \
  --split valid --threads 1 --out "$work/one-scores" > one-evaluate.log 2>&1 ||
  fail "evaluate, one process" one-evaluate.log
timeout 300 "${mpirun_nodes[@]}" "$build/bin/evaluate" --run "$work/runs/views" --checkpoint "$ckpt" \
  --data "$work/data" --split valid --threads 1 --out "$work/damaged-scores" \
  > damaged-evaluate.log 2>&1 || fail "evaluate with the checkpoint damaged on nodeb" damaged-evaluate.log
cmp one-scores/hypotheses.txt damaged-scores/hypotheses.txt || fail "hypotheses differ"
"$python" - one-scores/results.json damaged-scores/results.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["ranks"], b["ranks"]) == (1, 4), (a["ranks"], b["ranks"])
for key in ("num_examples", "loss", "nll", "exact_match", "step"):
    assert a[key] == b[key], (key, a[key], b[key])
PY
timeout 300 "${mpirun_nodes[@]}" "$build/bin/trainer" "${TINY[@]}" --data.dir "$work/data" \
  --run.out_dir "$work/runs" --run.name views --train.max_steps 8 > damaged.log 2>&1 ||
  fail "resuming with the checkpoint damaged on nodeb" damaged.log
grep -q "resuming from .*/step_00000004 (step 4" damaged.log || fail "not resumed from step 4" damaged.log
grep -q "parameters identical on all 4 ranks" damaged.log || fail "no replica check" damaged.log
echo "a checkpoint damaged on nodeb only: evaluate and resume read rank 0's"
echo "node views: OK"
