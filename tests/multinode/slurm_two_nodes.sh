#!/usr/bin/env bash
# slurm/train.sh on a Slurm cluster of two simulated nodes (one slurmd each,
# tests/slurm/cluster.bash): `sbatch --nodes=2 --ntasks-per-node=1`, USR1 to
# the batch script mid-run: every rank saves the same step and exits 75, the
# job is requeued, resumes from that checkpoint, completes, and its parameters
# are bitwise those of an uninterrupted run of the same two ranks on one node
# (the sum's order does not depend on the node layout). The log's first lines
# put rank 0 on nodea and rank 1 on nodeb.
# Installs Slurm and munge from Debian if missing; skips (exit 77) only where
# they cannot be installed, their daemons cannot run (not root) or the kernel
# refuses namespaces.
# Usage: slurm_two_nodes.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
source "$src/tests/slurm/cluster.bash"
require_namespaces
install_slurm
enter_shared_scratch multinode-slurm
trap 'stop_cluster; rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
start_cluster nodea nodeb
export REPO=$src BUILD=$build

prepare_tiny data
last=300
run_opts=(--train.max_steps $last --train.save_every 50 --train.log_every 10 --model.dropout 0.1)
opts=("${TINY[@]}" "${run_opts[@]}")
trainer_run whole 2 --config "$src/configs/default.toml" "${run_opts[@]}" || fail "uninterrupted run" whole.log

job=$(submit --nodes=2 --ntasks-per-node=1 "$src/slurm/train.sh" "$src/configs/default.toml" runs/usr1 \
  "${opts[@]}")
log=$work/train-$job.out
within 120 "the first checkpoint of runs/usr1" test -e runs/usr1/checkpoints/step_00000050
# The ranks stopped until train.sh has passed the signal on: the run cannot end first.
stopped=$(pids_matching "^$build/bin/trainer .*--run.name usr1( |$)")
[ "$(wc -w <<< "$stopped")" = 2 ] || fail "the 2 ranks of the job: found '$stopped'" "$log"
[ "$(for pid in $stopped; do node_of_pid "$pid"; done | sort | tr '\n' ' ')" = "nodea nodeb " ] ||
  fail "the ranks are not on nodea and nodeb" "$log"
kill -STOP $stopped
scancel --signal=USR1 --batch "$job"
within 60 "train.sh to pass SIGUSR1 on" grep -q "train: SIGUSR1 received" "$log"
kill -CONT $stopped
wait_job "$job" COMPLETED 300
[ "$(job_field "$job" Restarts)" = 1 ] || fail "job $job: $(job_field "$job" Restarts) restarts" "$log"
grep -q "node nodeb: rank(s) 1 (local 0-0)" "$log" || fail "rank 1 not on nodeb" "$log"
step=$(grep -o "preempted: checkpoint of step [0-9]*" "$log" | grep -o "[0-9]*$") || fail "no preemption" "$log"
grep -q "resuming from .*step_$(printf %08d "$step")" "$log" || fail "did not resume from step $step" "$log"
"$python" - <<'PY' || fail "the requeued two-node run differs from the one-node run" "$log"
import torch
a = torch.load("runs/whole/checkpoints/latest/model.pt")
b = torch.load("runs/usr1/checkpoints/latest/model.pt")
assert all(torch.equal(a[n], b[n]) for n in a)
PY
echo "sbatch --nodes=2: preempted at step $step, requeued, resumed, bitwise equal to one node"
