#!/usr/bin/env bash
# The same ranks on one node and on simulated nodes train bitwise the same
# (parameters and every logged loss; dropout on): 2 ranks as 1 node x 2 and
# 2 nodes x 1, 4 ranks as 1 x 4 (node-shared memory) and 2 x 2 (MPI between
# the nodes). The sum of the gradients is added in the ring's order on every
# path (trainer/distributed/mpi_ring.cpp), so a job requeued onto
# another layout of the same world size resumes bit for bit; the log's first
# lines name each node's ranks, local ranks and threads, and why 2 x 2 does
# not use node-shared memory.
# Usage: exactness.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-exact
prepare_tiny data
opts=(--train.max_steps 150 --train.log_every 10 --model.dropout 0.1)

same_run() {  # <run a> <run b>
  "$python" - "$1" "$2" <<'PY'
import json, sys, torch
a, b = sys.argv[1:]
ma = torch.load(f"runs/{a}/checkpoints/latest/model.pt")
mb = torch.load(f"runs/{b}/checkpoints/latest/model.pt")
assert all(torch.equal(ma[n], mb[n]) for n in ma), f"{a} and {b}: parameters differ"
la = [json.loads(l)["loss"] for l in open(f"runs/{a}/metrics.jsonl")]
lb = [json.loads(l)["loss"] for l in open(f"runs/{b}/metrics.jsonl")]
assert la == lb, f"{a} and {b}: logged losses differ: {la[-1]} vs {lb[-1]}"
print(f"{a} = {b}: bitwise, {len(la)} losses, last {la[-1]:.6f}")
PY
}

trainer_run one-node-2 2 "${opts[@]}" || fail "2 ranks on one node" one-node-2.log
write_hostfile 1 1
trainer_nodes two-nodes-2 "${opts[@]}" || fail "2 nodes x 1" two-nodes-2.log
grep -q "node nodea: rank(s) 0 (local 0-0); rank 0: 1 thread(s), cpu" two-nodes-2.log &&
  grep -q "node nodeb: rank(s) 1 (local 0-0); rank 1: 1 thread(s), cpu" two-nodes-2.log ||
  fail "no log line per node naming its ranks and threads" two-nodes-2.log
same_run one-node-2 two-nodes-2

trainer_run one-node-4 4 "${opts[@]}" || fail "4 ranks on one node" one-node-4.log
grep -q "node-shared memory, sharded update" one-node-4.log ||
  fail "one node did not use node-shared memory" one-node-4.log
write_hostfile 2 2
trainer_nodes two-nodes-4 "${opts[@]}" || fail "2 nodes x 2" two-nodes-4.log
grep -q "node nodeb: rank(s) 2,3 (local 0-1)" two-nodes-4.log || fail "no line for nodeb" two-nodes-4.log
grep -q "node-shared memory not used: the ranks span several nodes (2 of 4 on nodea)" two-nodes-4.log ||
  fail "the fall-back from node-shared memory to MPI is not explained" two-nodes-4.log
same_run one-node-4 two-nodes-4
echo "exactness across node layouts: OK"
