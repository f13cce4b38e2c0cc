#!/usr/bin/env bash
# Preemption and failures on a 2-rank run (dropout on), each compared with an
# uninterrupted run of the same config:
#   - SIGUSR1 to one rank: all ranks save at the same step, exit 75; resuming
#     (--resume latest) ends bitwise equal, with the same metrics.jsonl;
#   - two SIGTERMs to one rank: it exits at once, 143 before the stop's
#     checkpoint is begun, 75 once it is (finished first); none left corrupt;
#   - SIGKILL to one rank: the job ends within 60 s, non-zero; the previous
#     checkpoint verifies and resuming from it ends bitwise equal;
#   - SIGSTOP to one rank (a hang): the other rank's watchdog ends the job,
#     naming the host, the step, the phase and the collective in flight
#     (whichever collective the stop left unjoined).
# Usage: preemption_and_failures.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch resume-signals
prepare_tiny data

opts=(--train.max_steps 400 --train.save_every 50 --train.log_every 10 --model.dropout 0.1)
trainer_run reference 2 "${opts[@]}" || fail "uninterrupted run" reference.log

# The trainer processes of run <name> (not mpirun's).
ranks_of() { pids_matching "^$build/bin/trainer .*--run.name $1( |$)"; }
wait_for() {  # <path>: up to 60 s
  for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
  fail "$1 did not appear"
}
# Starts run <name> in the background (its pid in $job), waits for its first checkpoint.
start() {  # <name> [extra options...]
  local name=$1; shift
  trainer_run "$name" 2 "${opts[@]}" "$@" & job=$!
  wait_for "runs/$name/checkpoints/step_00000050"
}
finish() {  # waits for the background job; its exit code in $code
  code=0; wait "$job" || code=$?
}
every_checkpoint_verifies() {  # <name>
  for dir in runs/$1/checkpoints/step_*; do
    (cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "$dir does not verify"
  done
}
same_as_reference() {  # <name>
  "$python" - "$1" <<'PY'
import json, sys, torch
run = sys.argv[1]
a = torch.load("runs/reference/checkpoints/latest/model.pt")
b = torch.load(f"runs/{run}/checkpoints/latest/model.pt")
assert all(torch.equal(a[n], b[n]) for n in a), f"{run}: parameters differ from the uninterrupted run"
ra = [json.loads(l) for l in open("runs/reference/metrics.jsonl")]
rb = [json.loads(l) for l in open(f"runs/{run}/metrics.jsonl")]
assert [r["step"] for r in ra] == [r["step"] for r in rb], f"{run}: logged steps differ"
assert all(x["loss"] == y["loss"] for x, y in zip(ra, rb)), f"{run}: logged losses differ"
print(f"{run}: bitwise equal to the uninterrupted run, {len(rb)} identical metrics rows")
PY
}

# ---- SIGUSR1 to one rank -> checkpoint, exit 75, resume -------------------
start usr1
kill -USR1 "$(ranks_of usr1 | tail -1)"
finish
[ "$code" = 75 ] || fail "SIGUSR1: exit code $code, expected 75" usr1.log
saved=$(readlink runs/usr1/checkpoints/latest)
[ "$saved" != step_00000400 ] || fail "the run ended before the signal arrived" usr1.log
grep -q "preempted: checkpoint of step" usr1.log || fail "no preemption message" usr1.log
every_checkpoint_verifies usr1
trainer_run usr1 2 "${opts[@]}" --resume latest || fail "resume after SIGUSR1" usr1.log
grep -q "resuming from .*$saved" usr1.log || fail "did not resume from $saved" usr1.log
same_as_reference usr1

# ---- two SIGTERMs: out at once, nothing corrupt --------------------------
start term2
rank=$(ranks_of term2 | tail -1)
kill -TERM "$rank"; sleep 0.01; kill -TERM "$rank" 2>/dev/null || true  # (back to back they would merge)
finish
# The code says whether the stop's checkpoint was saved, whichever side of
# its start the second signal fell on (train/preemption.h): 143 (128 +
# SIGTERM) before it began, none saved for the stop; 75 once begun (held
# until written), the checkpoint saved and latest.
case $code in
  143) ! grep -q "preempted: checkpoint of step" term2.log ||
         fail "two SIGTERMs: exit 143 although the stop's checkpoint was saved" term2.log ;;
  75) step=$(sed -nE 's/.*preempted: checkpoint of step ([0-9]+) saved.*/\1/p' term2.log | head -1)
      [ -n "$step" ] || fail "two SIGTERMs: exit 75 without the stop's checkpoint" term2.log
      [ "$(readlink runs/term2/checkpoints/latest)" = "step_$(printf %08d "$step")" ] ||
        fail "two SIGTERMs: latest is not the stop's checkpoint of step $step" term2.log ;;
  *) fail "two SIGTERMs: exit code $code, expected 143 or 75" term2.log ;;
esac
echo "two SIGTERMs: exit $code"
every_checkpoint_verifies term2
trainer_run term2 2 "${opts[@]}" --resume latest || fail "resume after two SIGTERMs" term2.log
same_as_reference term2

# ---- SIGKILL: the job ends, the last checkpoint is intact ----------------
start kill
begin=$(date +%s)
kill -KILL "$(ranks_of kill | tail -1)"
finish
took=$(( $(date +%s) - begin ))
[ "$code" != 0 ] || fail "SIGKILL: exit code 0" kill.log
[ "$took" -le 60 ] || fail "SIGKILL: the job took $took s to end" kill.log
every_checkpoint_verifies kill
trainer_run kill 2 "${opts[@]}" --resume latest || fail "resume after SIGKILL" kill.log
same_as_reference kill
echo "SIGKILL of one rank: job ended in $took s with exit code $code"

# ---- SIGSTOP: the watchdog ends a hung job -------------------------------
start hang --train.watchdog_s 3
stopped=$(ranks_of hang | tail -1)
kill -STOP "$stopped"
begin=$(date +%s)
finish
took=$(( $(date +%s) - begin ))
kill -CONT "$stopped" 2>/dev/null || true
[ "$code" != 0 ] || fail "hung rank: exit code 0" hang.log
[ "$took" -le 60 ] || fail "hung rank: the job took $took s to end" hang.log
# Rank 0 waits in whichever collective its peer never joined: a step's
# allreduce, the interval log's allgather, a checkpoint's; the message names
# that phase and step, and the flight recorder the collective in flight, of
# that step — none in a checkpoint's phases, whose collectives are the
# control plane's (launch/ranks.h), not the communicator's.
watchdog=$(sed -nE "s/.*watchdog: rank 0 on $(hostname) has been in '(.*)' of step ([0-9]+) for.*/\2 \1/p" hang.log | head -1)
[ -n "$watchdog" ] || fail "no watchdog message naming rank, host, phase and step" hang.log
watchdog_step=${watchdog%% *} phase=${watchdog#* }
in_flight="#[0-9]* [a-z_]* [0-9.]* MiB, step $watchdog_step:"
[[ $phase == checkpoint* ]] && in_flight="($in_flight|none$)"
grep -qE "collective in flight: $in_flight" hang.log \
  || fail "no collective in flight of step $watchdog_step named (the flight recorder), phase '$phase'" hang.log
echo "hung rank: the watchdog ended the job in $took s with exit code $code"
echo "preemption and failures: OK"
