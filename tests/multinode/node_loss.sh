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
# hang, detected by the watchdog's timeout; the same result. Then a failure
# during the restart: nodeb killed, and rank 1 of the restarted job SIGKILLed
# as soon as it exists; local.sh restarts once more and the run still resumes
# from the survivor's checkpoint, with the same result.
# Usage: node_loss.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
source "$src/tests/multinode/node_loss.bash"
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
# [trainer options] [again: 1 kills rank 1 of the restarted job at its start]:
# the run through local.sh, nodeb failing 0-<delay> s after the log shows
# <after>; checked against the reference.
lose_nodeb() {
  local name=$1 how=$2 after=$3 delay=$4 more=${5:-} again=${6:-0} code=0 rank1 rank3 pid lost_at
  : > "$NODE_SHELL_DOWN"
  local_sh "$name" "$more" -n 4 --hostfile hosts --restart-ranks same --max-restarts $((1 + again)) -- &
  job=$!
  for _ in $(seq 12000); do grep -q "$after" "$name.log" 2> /dev/null && break; sleep 0.01; done
  rank3=$(rank_pid "$name" 3) || fail "no rank 3 of $name" "$name.log"
  [ "$(node_of_pid "$rank3")" = nodeb ] || fail "rank 3 is not on nodeb"
  sleep "$(awk -v r=$RANDOM -v d="$delay" 'BEGIN { print r % 16 / 15 * d }')"
  echo nodeb > "$NODE_SHELL_DOWN"
  if [ "$how" = kill ]; then kill_node_of "$rank3"; else kill -STOP "$rank3"; fi
  lost_at=$(date +%s)
  if ((again)); then
    rank1=$(rank_pid "$name" 1) || fail "no rank 1 of $name" "$name.log"
    for _ in $(seq 1200); do
      grep -q "launch: restart 1 of" "$name.log" && pid=$(rank_pid "$name" 1) && [ "$pid" != "$rank1" ] && break
      sleep 0.1
    done
    kill -KILL "$pid" || fail "$name: no rank 1 of the restarted job" "$name.log"
  fi
  wait "$job" || code=$?
  [ "$code" = 0 ] || fail "$name: local.sh exited $code" "$name.log"
  how+=" after '$after'"
  if ((again)); then
    grep -q "launch: restart 2 of 2 on 1 node(s) (nodea), 4 ranks" "$name.log" ||
      fail "$name: no second restart" "$name.log"
    how+=", then rank 1 of the restart killed at its start, restarted again on nodea"
  fi
  survived "$name" "$how" "$lost_at" $((1 + again))
}

lose_nodeb killed kill "checkpoint .*step_00000050 written" 1.5
# No sleep: the stop lands a few steps after a random one of steps 10-150.
lose_nodeb stopped stop "step  *$((RANDOM % 15 * 10 + 10)) |" 0 "--train.save_every 0"
lose_nodeb twice kill "checkpoint .*step_00000050 written" 1.5 "" 1
echo "node loss: OK"
