#!/usr/bin/env bash
# The dataset's shards are checked by one rank of each node, each against its
# own node's view of the files (data_pipeline/node_check.h): a shard missing
# from the second node's view only (a node-local copy gone stale) stops the
# trainer and evaluate on 2 simulated nodes x 2 ranks before any step or
# score, every rank naming the shard and the rank and node that found it;
# with both views whole, the same commands run.
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
echo "node views: OK"
