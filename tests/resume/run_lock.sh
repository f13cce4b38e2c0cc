#!/usr/bin/env bash
# One trainer per run directory (train/run_lock.h): a second trainer started
# on a run that is training is refused within seconds, naming the holder's
# host, PID and start time, and changes nothing of the run (its config is
# not rewritten); the first trains on to the end. A holder killed
# by SIGKILL leaves no lock behind: the next trainer resumes at once.
# Usage: run_lock.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch resume-lock
prepare_tiny data
opts=(--train.max_steps 300 --train.save_every 50)

trainer_run owner 2 "${opts[@]}" & owner=$!
for _ in $(seq 600); do [ -e runs/owner/checkpoints/step_00000050 ] && break; sleep 0.1; done
[ -e runs/owner/checkpoints/step_00000050 ] || fail "the first trainer wrote no checkpoint" owner.log
before=$(sha256sum < runs/owner/config.toml)

code=0
timeout 120 bash "$src/scripts/mpirun.sh" -np 2 "$build/bin/trainer" "${TINY[@]}" --run.name owner \
  "${opts[@]}" --train.max_steps 5 > second.log 2>&1 || code=$?
[ "$code" != 0 ] || fail "a second trainer ran on a run directory in use" second.log
grep -q "the run directory .*/runs/owner is in use by another trainer (host $(hostname), PID [0-9]*, Slurm job none, since 20" \
  second.log || fail "the refusal does not name the holder" second.log
[ "$(sha256sum < runs/owner/config.toml)" = "$before" ] || fail "the second trainer rewrote config.toml"
wait "$owner" || fail "the first trainer did not finish" owner.log
[ "$(readlink runs/owner/checkpoints/latest)" = step_00000300 ] || fail "the first trainer did not end" owner.log

# A holder killed by SIGKILL: the next trainer takes the lock and resumes.
trainer_run killed 1 "${opts[@]}" & job=$!
for _ in $(seq 600); do [ -e runs/killed/checkpoints/step_00000050 ] && break; sleep 0.1; done
kill -KILL "$(pids_matching "^$build/bin/trainer .*--run.name killed( |$)")"
wait "$job" || true
trainer_run killed 1 "${opts[@]}" || fail "no resume after the holder was killed" killed.log
grep -q "resuming from" killed.log || fail "did not resume" killed.log
echo "run lock: OK"
