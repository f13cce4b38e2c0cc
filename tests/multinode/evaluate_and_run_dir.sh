#!/usr/bin/env bash
# Two more things a job on two nodes must get right:
#   - evaluate on 4 ranks over 2 simulated nodes writes what one process
#     writes (hypotheses, loss, exact match), greedy and beam 4;
#   - a run directory that only the first node sees (node-local /tmp) stops
#     the trainer at start-up, naming the directory, the config keys and the
#     ranks and host that cannot see it, before any step (it used to train
#     and fail at the first resume).
# Usage: evaluate_and_run_dir.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-eval
prepare_tiny data 40
trainer_run tiny 1 --train.max_steps 60 || fail "training" tiny.log

write_hostfile 2 2
for beam in 1 4; do
  timeout 300 "$build/bin/evaluate" --run runs/tiny --threads 1 --beam "$beam" --batch-tokens 64 \
    --out one-$beam > one.json 2> one.log || fail "evaluate, one process" one.log
  timeout 300 "${mpirun_nodes[@]}" "$build/bin/evaluate" --run "$PWD/runs/tiny" --threads 1 \
    --beam "$beam" --batch-tokens 64 --out "$PWD/nodes-$beam" > nodes.json 2> nodes.log ||
    fail "evaluate on 2 x 2" nodes.log
  cmp one-$beam/hypotheses.txt nodes-$beam/hypotheses.txt || fail "beam $beam: hypotheses differ"
  "$python" - one-$beam/results.json nodes-$beam/results.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["ranks"], b["ranks"]) == (1, 4), (a["ranks"], b["ranks"])
for key in ("num_examples", "loss", "nll", "exact_match"):
    assert a[key] == b[key], (key, a[key], b[key])
PY
done

code=0
timeout 300 "${mpirun_nodes[@]}" "$build/bin/trainer" "${TINY[@]}" --run.out_dir /tmp/node-local-runs \
  --run.name private --train.max_steps 20 > private.log 2>&1 || code=$?
[ "$code" != 0 ] || fail "trained with a run directory nodeb cannot see" private.log
grep -q "the run directory (run.out_dir / run.name) /tmp/node-local-runs/private is not the same directory on every node (rank 2 on nodeb: No such file or directory; rank 3 on nodeb" private.log ||
  fail "no error naming the directory, the keys and nodeb's ranks" private.log
! grep -q "step      1 " private.log || fail "a step ran before the error" private.log
echo "evaluate on two nodes, a run directory one node cannot see: OK"
