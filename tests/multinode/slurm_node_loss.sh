#!/usr/bin/env bash
# A lost node under Slurm (docs/cluster.md, "A lost node"): slurm/train.sh on
# a cluster of three simulated nodes (tests/slurm/cluster.bash), the update
# not sharded, dropout on, twice: the ranks started by srun (`sbatch
# --nodes=2 --ntasks-per-node=2`), then by mpirun (LAUNCHER=mpirun, `sbatch
# --nodes=3 --ntasks=4`). At a random step after the first checkpoint nodeb
# dies: every process in its namespaces is killed (SIGKILL), its slurmd and
# the job step's slurmstepd (or mpirun's daemon) among them. Then, within the
# same job (no requeue): one survivor saves the last step every rank
# completed; train.sh finds nodeb no longer answers and starts the trainer
# again with the same 4 ranks (RESTART_RANKS=same) — srun's on nodea alone,
# two to a CPU (--overcommit), mpirun's on nodea and nodec (its daemon on
# nodec started by an srun beside the failed step: --overlap) — and it
# resumes from that step: 0 steps recomputed, parameters and examples ledger
# bitwise those of an uninterrupted run (tests/multinode/node_loss.bash). No
# job step waits for resources (srun's "step creation temporarily disabled"):
# without --overlap it would wait until Slurm marks nodeb DOWN.
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
start_cluster nodea nodeb nodec
export REPO=$src BUILD=$build

prepare_tiny data
write_hostfile 2 2
last=300
opts=(--train.max_steps $last --train.save_every 50 --train.log_every 10 --model.dropout 0.1
  --dist.shard_update off --train.watchdog_s 15)
trainer_nodes reference --config "$src/configs/default.toml" "${opts[@]}" || fail "uninterrupted run" reference.log

for launcher in srun mpirun; do
  name=killed-$launcher
  case $launcher in
    srun) layout=(--nodes=2 --ntasks-per-node=2) left=nodea ;;
    mpirun) layout=(--nodes=3 --ntasks=4) left=nodea,nodec ;;
  esac
  job=$(LAUNCHER=$launcher MAX_RESTARTS=1 RESTART_RANKS=same submit "${layout[@]}" \
    "$src/slurm/train.sh" "$src/configs/default.toml" "runs/$name" "${TINY[@]}" "${opts[@]}")
  ln -s "train-$job.out" "$name.log"
  within 120 "the first checkpoint of runs/$name" grep -q "checkpoint .*step_00000050 written" "$name.log"
  on_nodeb=""
  for rank in 1 2 3; do
    pid=$(rank_pid "$name" $rank) || fail "no rank $rank of the job" "$name.log"
    [ "$(node_of_pid "$pid")" = nodeb ] && on_nodeb=$pid
  done
  [ -n "$on_nodeb" ] || fail "no rank on nodeb" "$name.log"
  sleep "$(awk -v r=$RANDOM 'BEGIN { print r % 16 / 10 }')"
  kill_node_of "$on_nodeb"
  lost_at=$(date +%s)
  wait_job "$job" COMPLETED 300
  [ "$(job_field "$job" Restarts)" = 0 ] || fail "job $job was requeued" "$name.log"
  ! grep -q "step creation temporarily disabled" "$name.log" ||
    fail "$name: a job step waited for the failed step's resources" "$name.log"
  survived "$name" "kill, ranks started by $launcher" "$lost_at" 1 "$left"
  [ $launcher = mpirun ] && break
  start_node nodeb  # the next job's
  within 60 "nodeb back in service" bash -c '[ "$(sinfo -h -n nodeb -o %T)" = idle ]'
done
echo "slurm node loss: OK"
