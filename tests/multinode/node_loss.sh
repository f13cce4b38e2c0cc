#!/usr/bin/env bash
# A lost node costs no completed step (docs/cluster.md, "A lost node"): 2
# simulated nodes x 2 ranks through launch/local.sh with a hostfile, the
# update not sharded (every rank holds all of Adam), dropout on. At a random
# step after the first checkpoint, nodeb goes away: it stops answering (the
# node shell refuses it, as ssh a dead machine) and every process in its
# namespaces is killed (SIGKILL). Then, within the same local.sh invocation:
#   - one survivor on nodea saves the last step every rank completed, a step
#     past the last periodic checkpoint;
#   - local.sh restarts the trainer on nodea alone with the same 4 ranks
#     (--restart-ranks same: the same world size, so the same sums) and it
#     resumes from that step: steps recomputed = the survivors' last
#     completed step - the step resumed = 0;
#   - the run ends with parameters bitwise equal to an uninterrupted run's,
#     and the same examples ledger.
# Then the same with rank 3 stopped (SIGSTOP) instead, in a run that saves no
# periodic checkpoint (train.save_every 0: the survivor's is its first): a
# hang, detected by the watchdog's timeout; the same result.
# Usage: node_loss.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-node-loss
prepare_tiny data
write_hostfile 2 2
last=300
opts=(--train.max_steps $last --train.save_every 50 --train.log_every 10 --model.dropout 0.1
  --dist.shard_update off --train.watchdog_s 15)
trainer_nodes reference "${opts[@]}" || fail "uninterrupted run" reference.log

export NODE_SHELL_DOWN=$work/down
: > "$NODE_SHELL_DOWN"
trap stop_jobs EXIT

# local.sh on nodea (nodes.bash) training run <name>, its log in <name>.log.
local_sh() {  # <run name> <trainer options (after opts)> [local.sh arguments... --]
  local name=$1 more=$2; shift 2
  # shellcheck disable=SC2086 # $more: words
  local_sh_nodes "$@" "$build/bin/trainer" "${TINY[@]}" --run.name "$name" "${opts[@]}" $more \
    > "$name.log" 2>&1
}

# <name> <how nodeb fails: kill|stop> <after: a pattern of the log> <delay: s>
# [trainer options]: the run through local.sh, nodeb failing 0-<delay> s after
# the log shows <after>; checked against the reference.
lose_nodeb() {
  local name=$1 how=$2 after=$3 delay=$4 more=${5:-} code=0 rank3 saved resumed recomputed lost_at
  : > "$NODE_SHELL_DOWN"
  local_sh "$name" "$more" -n 4 --hostfile hosts --restart-ranks same --max-restarts 1 -- & job=$!
  for _ in $(seq 12000); do grep -q "$after" "$name.log" 2> /dev/null && break; sleep 0.01; done
  rank3=$(rank_pid "$name" 3) || fail "no rank 3 of $name" "$name.log"
  [ "$(node_of_pid "$rank3")" = nodeb ] || fail "rank 3 is not on nodeb"
  sleep "$(awk -v r=$RANDOM -v d="$delay" 'BEGIN { print r % 16 / 15 * d }')"
  echo nodeb > "$NODE_SHELL_DOWN"
  if [ "$how" = kill ]; then kill_node_of "$rank3"; else kill -STOP "$rank3"; fi
  lost_at=$(date +%s)
  wait "$job" || code=$?
  [ "$code" = 0 ] || fail "$name: local.sh exited $code" "$name.log"
  grep -q "launch: restart 1 of 1 on 1 node(s) (nodea), 4 ranks; lost: nodeb" "$name.log" ||
    fail "$name: no restart on nodea without nodeb" "$name.log"
  saved=$(sed -n 's/.*survivor checkpoint of step \([0-9]*\) written .* by rank [0-3] on node[ab].*/\1/p' \
    "$name.log")
  [ -n "$saved" ] || fail "$name: no survivor checkpoint written" "$name.log"
  ((saved % 50 != 0)) || echo "($name: nodeb failed right at a periodic checkpoint, step $saved)"
  ((saved < last)) || fail "$name: nodeb failed after the run's last step" "$name.log"
  resumed=$(sed -n 's/.*resuming from .*step_0*\([0-9][0-9]*\) .*/\1/p' "$name.log" | tail -1)
  [ "$resumed" = "$saved" ] || fail "$name: resumed from step $resumed, not the survivors' $saved" "$name.log"
  # Each survivor's last completed step: the writer's, and the others' in
  # "rank R (step S): the survivor checkpoint is written by ...".
  recomputed=$(sed -n 's/.*rank [0-9]* (step \([0-9]*\)): the survivor checkpoint is written by.*/\1/p' \
    "$name.log" | awk -v s="$saved" '{ if ($1 - s > r) r = $1 - s } END { print r + 0 }')
  [ "$recomputed" = 0 ] || fail "$name: $recomputed step(s) recomputed" "$name.log"
  "$python" - "$name" <<'PY' || fail "$name: differs from the uninterrupted run" "$name.log"
import json, sys, torch
name = sys.argv[1]
a = torch.load("runs/reference/checkpoints/latest/model.pt")
b = torch.load(f"runs/{name}/checkpoints/latest/model.pt")
assert all(torch.equal(a[n], b[n]) for n in a), "parameters differ"
sa = json.load(open("runs/reference/checkpoints/latest/state.json"))
sb = json.load(open(f"runs/{name}/checkpoints/latest/state.json"))
assert sa["step"] == sb["step"] == 300, (sa["step"], sb["step"])
assert sa["examples_ledger"] == sb["examples_ledger"], "ledgers differ"
PY
  echo "$name: nodeb lost ($how) after '$after'; survivor saved step $saved, resumed there, 0 steps" \
    "recomputed; final parameters and ledger bitwise the uninterrupted run's"
  # Seconds from the loss to the survivor's checkpoint and to the first step
  # after the restart (the log's clock, to the second; docs/cluster.md).
  awk -v lost=$((lost_at % 86400)) -v name="$name" '
    function at(line) { split(substr(line, 2, 8), t, ":"); return (t[1] * 3600 + t[2] * 60 + t[3] - lost + 86400) % 86400 }
    /survivor checkpoint of step .* written/ { saved = at($0) }
    /resuming from/ { resumed = 1 }
    resumed && /\] step +[0-9]+ \|/ && !first { first = at($0) }
    END { printf "%s: survivor checkpoint %d s after the loss, first step after the restart %d s after\n", name, saved, first }
  ' "$name.log"
}

lose_nodeb killed kill "checkpoint .*step_00000050 written" 1.5
# No sleep: the stop lands a few steps after a random one of steps 10-150.
lose_nodeb stopped stop "step  *$((RANDOM % 15 * 10 + 10)) |" 0 "--train.save_every 0"
echo "node loss: OK"
