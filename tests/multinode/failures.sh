#!/usr/bin/env bash
# Failures of a rank on the second of two simulated nodes (2 x 2, dropout on),
# each against an uninterrupted run:
#   - SIGUSR1 (a preemption warning) to rank 3 on nodeb: every rank saves the
#     same step and exits 75, none by a signal (mpirun's TERM to the ranks
#     still shutting down once one has exited 75 is not a second request);
#     resuming ends bitwise equal to the uninterrupted run;
#   - SIGKILL of rank 3: the job ends within 40 s (the survivors' grace,
#     scripts/mpirun.sh), mpirun naming nodeb and the rank;
#   - SIGSTOP of rank 3 (a hang): the watchdog of a rank on nodea ends the job
#     with 124, naming its rank, its host, the step and the collective in
#     flight, and printing its last collectives.
# Usage: failures.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-failures
prepare_tiny data
write_hostfile 2 2
opts=(--train.max_steps 300 --train.save_every 50 --train.log_every 10 --model.dropout 0.1)
trainer_nodes reference "${opts[@]}" || fail "uninterrupted run" reference.log

wait_for() {  # <path>: up to 120 s
  for _ in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.1; done
  fail "$1 did not appear"
}
trap stop_jobs EXIT
start() {  # <name> [extra options...]: in the background (pid in $job), up to its first checkpoint
  local name=$1; shift
  trainer_nodes "$name" "${opts[@]}" "$@" & job=$!
  wait_for "runs/$name/checkpoints/step_00000050"
  rank3=$(rank_pid "$name" 3) || fail "no rank 3 of $name"
  [ "$(node_of_pid "$rank3")" = nodeb ] || fail "rank 3 is not on nodeb"
}
finish() { code=0; wait "$job" || code=$?; }

# ---- SIGUSR1 to a rank on nodeb: all save the same step, exit 75 -------------
start usr1
kill -USR1 "$rank3"
finish
[ "$code" = 75 ] || fail "SIGUSR1 on nodeb: exit code $code, expected 75" usr1.log
[ "$(grep -c "preempted: checkpoint of step" usr1.log)" = 1 ] || fail "no preemption message" usr1.log
! grep -q "exited on signal" usr1.log || fail "a rank was killed by a signal" usr1.log
saved=$(readlink runs/usr1/checkpoints/latest)
trainer_nodes usr1 "${opts[@]}" --resume latest || fail "resume after SIGUSR1" usr1.log
grep -q "resuming from .*$saved" usr1.log || fail "did not resume from $saved" usr1.log
"$python" - <<'PY' || fail "the resumed run differs from the uninterrupted one"
import torch
a = torch.load("runs/reference/checkpoints/latest/model.pt")
b = torch.load("runs/usr1/checkpoints/latest/model.pt")
assert all(torch.equal(a[n], b[n]) for n in a)
PY

# ---- SIGKILL of a rank on nodeb: the job ends in seconds, naming it ---------
start kill
begin=$SECONDS
kill -KILL "$rank3"
finish
took=$((SECONDS - begin))
[ "$code" != 0 ] || fail "SIGKILL on nodeb: exit code 0" kill.log
# mpirun's daemons give the ranks left 2 x 5 s (scripts/mpirun.sh), nodea's
# daemon and then nodeb's.
[ "$took" -le 40 ] || fail "SIGKILL on nodeb: the job took $took s to end" kill.log
grep -q "rank 3 .* on node nodeb exited on signal 9" kill.log || fail "nodeb and rank 3 not named" kill.log

# ---- SIGSTOP of a rank on nodeb: the watchdog on nodea ends the job ---------
start hang --train.watchdog_s 10
kill -STOP "$rank3"
finish
kill -CONT "$rank3" 2>/dev/null || true
[ "$code" = 124 ] || fail "hung rank on nodeb: exit code $code, expected 124" hang.log
grep -q "watchdog: rank [0-2] on node[ab] has been in '[a-z' ]*' of step [0-9]* for" hang.log ||
  fail "no watchdog message naming rank, host, phase and step" hang.log
grep -q "on node[ab]: collective in flight: #[0-9]* " hang.log || fail "no collective in flight" hang.log
echo "failures on the second node: OK (SIGKILL: ended in $took s)"
