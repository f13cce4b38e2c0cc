#!/usr/bin/env bash
# Chaos trials for checkpoint/resume (not part of the test suite): each trial
# trains a tiny model on 2 simulated nodes x 1 rank (tests/multinode/nodes.bash),
# the update not sharded, and interrupts it at random moments with a random
# blow — SIGUSR1, SIGTERM, two SIGTERMs, SIGKILL, SIGSTOP (a hang the
# watchdog must end), or the loss of a whole node (every process in its
# namespaces SIGKILLed) — to a random rank or its node, then resumes with
# --resume auto, until the run completes (each attempt once the last process
# of the one before has ended, as a scheduler requeues). Printed: trials,
# interruptions, hangs (a job, or a process of it, not ended within 60 s),
# steps lost per interruption
# (steps trained minus the step resumed from: 0 where a survivor saved the
# last step every rank completed, docs/cluster.md "A lost node"), corrupt
# checkpoints, and final parameters that differ from an uninterrupted run.
#
#   tests/chaos/resume_chaos.sh [trials]        (default 20; BUILD_DIR=build; root)
#
# SAVE_EVERY (default 25) sets train.save_every: a small value (5) keeps a
# background checkpoint write in flight for much of the run, so that blows
# land during writes.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
trials=${1:-20}
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
export TRAINER_STARTUP_TIMEOUT_S=10  # a rank stopped during MPI start-up ends the job in 10 s
enter_shared_scratch resume-chaos
prepare_tiny data
write_hostfile 1 1
opts=(--train.max_steps 600 --train.save_every "${SAVE_EVERY:-25}" --model.dropout 0.1 --train.watchdog_s 3
  --dist.shard_update off)
trainer_nodes reference "${opts[@]}" || fail "uninterrupted run" reference.log

blows=(USR1 TERM TERM2 KILL STOP NODE)
declare -A dealt=() lost_by=()  # blows by kind, and the steps they lost
interruptions=0 hangs=0 corrupt=0 differ=0 lost_total=0 lost_max=0
for trial in $(seq "$trials"); do
  name=trial$trial
  for attempt in 1 2 3 4; do
    trainer_nodes "$name" "${opts[@]}" --resume auto & job=$!
    unset blow
    if [ "$attempt" -le 3 ]; then  # interrupt the first three attempts
      sleep "$("$python" -c 'import random; print(random.uniform(0.3, 3.0))')"
      mapfile -t ranks < <(pgrep -f "^$build/bin/trainer .*--run.name $name( |$)" || true)
      if [ ${#ranks[@]} -gt 0 ]; then
        target=${ranks[RANDOM % ${#ranks[@]}]}
        blow=${blows[RANDOM % ${#blows[@]}]}
        case $blow in
          TERM2) kill -TERM "$target" 2>/dev/null; sleep 0.01; kill -TERM "$target" 2>/dev/null ;;
          NODE) kill_node_of "$target" ;;
          *) kill "-$blow" "$target" 2>/dev/null ;;
        esac || true
        interruptions=$((interruptions + 1))
        dealt[$blow]=$((${dealt[$blow]:-0} + 1))
      fi
    fi
    code=0
    for _ in $(seq 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$job" 2>/dev/null; then
      hangs=$((hangs + 1))
      echo "HANG in $name attempt $attempt after ${blow:-no blow} to pid ${target:-?}; processes:"
      ps -o pid,stat,etime,args -p "$(pgrep -d, -f "run.name $name( |$)" || echo 1)" | cut -c1-90 || true
      echo "log tail:"; tail -4 "$name.log" | cut -c1-200
      pkill -KILL -f "run.name $name( |$)" || true
    fi
    wait "$job" || code=$?
    pkill -CONT -f "run.name $name( |$)" 2>/dev/null || true
    # The job has ended once its last process has, as a scheduler sees it
    # before it requeues: mpirun dies with its node (NODE on nodea) while
    # the other node's survivor is still saving (its watchdog fires 3 s on).
    for _ in $(seq 600); do pgrep -f "run.name $name( |$)" > /dev/null || break; sleep 0.1; done
    if pgrep -f "run.name $name( |$)" > /dev/null; then
      hangs=$((hangs + 1))
      echo "HANG in $name attempt $attempt: processes left 60 s after the job ended"
      pkill -KILL -f "run.name $name( |$)" || true
    fi
    [ "$code" = 0 ] && break
    # Steps trained before the blow vs the checkpoint the next attempt resumes from.
    trained=$(tail -1 "runs/$name/metrics.jsonl" 2>/dev/null | sed 's/.*"step":\([0-9]*\).*/\1/' || true)
    resumed=$(readlink "runs/$name/checkpoints/latest" 2>/dev/null | sed 's/step_0*//' || true)
    lost=$(( ${trained:-0} - ${resumed:-0} ))
    [ "$lost" -ge 0 ] || lost=0  # the survivor saved a step whose metrics row the loss kept unwritten
    lost_total=$((lost_total + lost)); [ "$lost" -gt "$lost_max" ] && lost_max=$lost
    [ -z "${blow:-}" ] || lost_by[$blow]="${lost_by[$blow]:-}${lost_by[$blow]:+ }$lost"
    case "${blow:-}" in  # a rank or node lost, and steps with it: the survivors' word on why
      KILL | STOP | NODE) if [ "$lost" -gt 0 ]; then
          echo "$name attempt $attempt: $blow lost $lost steps (trained $trained, resumed $resumed):"
          { grep -vE "snapshot in|^#[0-9]|info\] step " "$name.log" || true; } | tail -12 | cut -c1-240 |
            sed 's/^/    /'
        fi ;;
    esac
  done
  for dir in runs/$name/checkpoints/step_*; do
    (cd "$dir" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) || corrupt=$((corrupt + 1))
  done
  "$python" - "$name" <<'PY' || differ=$((differ + 1))
import sys, torch
a = torch.load("runs/reference/checkpoints/latest/model.pt")
b = torch.load(f"runs/{sys.argv[1]}/checkpoints/latest/model.pt")
sys.exit(0 if all(torch.equal(a[n], b[n]) for n in a) else 1)
PY
  echo "trial $trial done ($interruptions interruptions so far)"
done
echo
echo "blows (steps each lost): $(for b in "${blows[@]}"; do
  printf '%s %d (%s), ' "$b" "${dealt[$b]:-0}" "${lost_by[$b]:-}"; done | sed 's/, $//')"
echo "| trials | interruptions | hangs | steps lost (mean / max) | corrupt checkpoints | final parameters differing |"
echo "|---|---|---|---|---|---|"
printf '| %d | %d | %d | %.1f / %d | %d | %d |\n' "$trials" "$interruptions" "$hangs" \
  "$("$python" -c "print($lost_total / max(1, $interruptions))")" "$lost_max" "$corrupt" "$differ"
