#!/usr/bin/env bash
# A lost node under Slurm (docs/cluster.md, "A lost node"): slurm/train.sh on
# a cluster of two simulated nodes (tests/slurm/cluster.bash), `sbatch
# --nodes=2 --ntasks-per-node=2` (ranks started by srun), the update not
# sharded, dropout on. At a random step after the first checkpoint nodeb
# dies: every process in its namespaces is killed (SIGKILL), its slurmd and
# the job step's slurmstepd among them. Then, within the same job (no
# requeue): one survivor on nodea saves the last step every rank completed;
# train.sh finds nodeb no longer answers, starts the trainer again on nodea
# alone with the same 4 ranks (RESTART_RANKS=same) and it resumes from that
# step: 0 steps recomputed, parameters and examples ledger bitwise those of
# an uninterrupted run (tests/multinode/node_loss.bash).
# Installs Slurm and munge from Debian if missing; skips (exit 77) only where
# they cannot be installed, their daemons cannot run (not root) or the kernel
# refuses namespaces.
# Usage: slurm_node_loss.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
source "$src/tests/multinode/node_loss.bash"
source "$src/tests/slurm/cluster.bash"
require_namespaces
install_slurm
enter_shared_scratch multinode-slurm-node-loss
trap 'stop_cluster; rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
# Slurm marks nodeb DOWN 30 s after it stopped answering: only then does the
# job, its work done, end (its steps' parts on nodeb never report back).
slurmd_timeout=30
start_cluster nodea nodeb
export REPO=$src BUILD=$build

prepare_tiny data
write_hostfile 2 2
last=300
opts=(--train.max_steps $last --train.save_every 50 --train.log_every 10 --model.dropout 0.1
  --dist.shard_update off --train.watchdog_s 15)
trainer_nodes reference --config "$src/configs/default.toml" "${opts[@]}" || fail "uninterrupted run" reference.log

job=$(MAX_RESTARTS=1 RESTART_RANKS=same submit --nodes=2 --ntasks-per-node=2 "$src/slurm/train.sh" \
  "$src/configs/default.toml" runs/killed "${TINY[@]}" "${opts[@]}")
ln -s "train-$job.out" killed.log
within 120 "the first checkpoint of runs/killed" grep -q "checkpoint .*step_00000050 written" killed.log
rank3=$(rank_pid killed 3) || fail "no rank 3 of the job" killed.log
[ "$(node_of_pid "$rank3")" = nodeb ] || fail "rank 3 is not on nodeb" killed.log
sleep "$(awk -v r=$RANDOM 'BEGIN { print r % 16 / 10 }')"
kill_node_of "$rank3"
lost_at=$(date +%s)
wait_job "$job" COMPLETED 300
[ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued" killed.log
survived killed kill "$lost_at"
echo "slurm node loss: OK"
