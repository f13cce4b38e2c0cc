#!/usr/bin/env bash
# Trains run RUN_DIR (= <run.out_dir>/<run.name>) from CONFIG, one rank per
# Slurm task, and lives through preemption and time limits: on USR1 or TERM the
# trainer checkpoints and exits 75, and this script requeues the job, which
# resumes from that checkpoint (--resume latest; a --resume among the trainer
# options applies to the first run only, e.g. --resume none to start afresh).
# A lost node (it died, or a rank hung) costs no completed step and no trip
# through the queue: the survivors save the last step every rank completed,
# and this script starts the trainer again within the job on the nodes that
# still answer (MAX_RESTARTS, MIN_NODES, RESTART_RANKS: slurm/lib.bash;
# docs/cluster.md, "A lost node"). Past those bounds the job requeues.
#   sbatch slurm/train.sh CONFIG RUN_DIR [trainer options...]
#   sbatch slurm/train.sh configs/base.toml runs/base --optim.lr 1.0
# Run from the checkout, or pass REPO and BUILD (see slurm/lib.bash).
#SBATCH --job-name=train
#SBATCH --nodes=1                # machines
#SBATCH --ntasks-per-node=2      # ranks per machine: one per GPU, or per group of CPU cores
#SBATCH --cpus-per-task=1        # cores per rank (torch threads follow); GPU ranks: 4-8, see below
# On GPU nodes, remove one # from the next line and set --cpus-per-task=8 (or
# the node's cores / its GPUs): each rank gets its own GPU (Slurm binds it;
# the trainer finds which by its UUID) and cores for its main thread,
# autograd's device thread, the data prefetcher, NCCL's proxy and MPI.
##SBATCH --gpus-per-task=1       # one GPU per rank (= --ntasks-per-node GPUs per machine)
#SBATCH --time=24:00:00          # wall-clock limit of each run of the job
##SBATCH --partition=gpu         # your cluster's partition (remove one # to use)
#SBATCH --output=%x-%j.out       # the log, in the directory sbatch was run from ...
#SBATCH --open-mode=append       # ... appended to by every run of a requeued job
#SBATCH --requeue                # the job may be requeued (by this script, or by Slurm on preemption)
#SBATCH --no-kill                # a node that fails leaves the job (not ended): it goes on without it
#SBATCH --signal=B:USR1@300      # USR1 to this script 5 minutes before the time limit
set -euo pipefail

# USR1 (the time-limit warning, preemption, `scancel --signal=USR1 --batch`)
# or TERM: ask the trainer, once, to checkpoint and stop, and start it no
# more. The launcher gets USR1 either way and passes it to every rank (on TERM
# it would kill them). A TERM to the whole job (time limit, scancel, requeue,
# end of a preemption's grace time) is not passed on: Slurm sends it to every
# rank itself, and a second signal would make the trainer exit at once,
# without a checkpoint. Trapped from the first line: a signal before the
# trainer starts requeues the job without starting it.
# in_job_restart.bash's: no (re)start once stopped; the launcher's PID; a
# signal for a launcher not started yet.
stopped=0 child="" held_signal=""
forward() {  # <signal name>
  ((stopped)) && return
  stopped=1
  if [ "$1" = TERM ] && ! scontrol show job "$SLURM_JOB_ID" | grep -q "JobState=RUNNING"; then
    echo "train: SIGTERM to the whole job: the ranks got it too and checkpoint"
    return
  fi
  echo "train: SIG$1 received: the trainer checkpoints and stops"
  if [ -n "$child" ]; then kill -USR1 "$child" 2> /dev/null || true; else held_signal=USR1; fi
}
trap 'forward USR1' USR1
trap 'forward TERM' TERM

(($# >= 2)) || { echo "usage: sbatch slurm/train.sh CONFIG RUN_DIR [trainer options...]" >&2; exit 2; }
REPO=${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}
source "$REPO/slurm/lib.bash"
source "$REPO/launch/in_job_restart.bash"

config=$1 run=$2; shift 2
announce train "run $run"

# One run of the trainer on the nodes of a hostfile (job_nodes): the job's
# launcher as it is, the first time; a restart names the nodes, and with more
# ranks than their tasks (RESTART_RANKS=same) puts several to a CPU.
# --overlap: the failed step keeps its resources (on every node) until Slurm
# hears from the lost node's slurmstepd, which it never will: Slurm would
# refuse the new step until it marks that node DOWN (SlurmdTimeout, 300 s by
# default). Its processes on the nodes left are gone (--kill-on-bad-exit);
# the new step may share what it holds.
all_nodes=$(mktemp)
job_nodes > "$all_nodes"
job_command() {  # <nodes file> <ranks> <unbound>
  local nodes=$1 ranks=$2 unbound=$3 count list
  cmd=("${launch[@]}")
  [ -n "${TRAINER_RESTART:-}" ] || return 0  # the first run
  case ${LAUNCHER:-srun} in
    # --ntasks-per-node: as many on each node (a job of uneven tasks per node
    # restarts only where that fits).
    srun)
      count=$(grep -c . "$nodes")
      list=$(awk '{ print $1 }' "$nodes" | paste -sd, -)
      cmd+=(--overlap --nodes="$count" --nodelist="$list" --ntasks="$ranks"
        --ntasks-per-node=$(((ranks + count - 1) / count)))
      ((!unbound)) || cmd+=(--overcommit) ;;
    # The nodes file is an Open MPI hostfile; within a Slurm allocation it
    # picks those of the allocation's nodes (mpirun(1), "Specifying Host
    # Nodes"), with their tasks as slots. mpirun starts its daemons on the
    # nodes other than its own with one srun, which needs --overlap as above:
    # Open MPI 4.1 appends plm_slurm_args to that srun's options
    # (orte/mca/plm/slurm/plm_slurm_module.c).
    mpirun)
      cmd=(env "OMPI_MCA_plm_slurm_args=${OMPI_MCA_plm_slurm_args:+$OMPI_MCA_plm_slurm_args }--overlap"
        bash "$REPO/scripts/mpirun.sh" -np "$ranks" --hostfile "$nodes")
      if ((unbound)); then cmd+=(--bind-to none); else cmd+=("${mpirun_binding[@]}"); fi ;;
  esac
}
# A node answers when a job step of one task runs `true` on it (--overlap:
# beside the failed step, see above).
probe_command() {  # <node>
  cmd=(srun --overlap --nodes=1 --ntasks=1 --nodelist="$1" --mpi=none true)
}

# --resume latest unless the options say otherwise (the last --resume wins);
# a requeued run, and a restart within the job, always go on from its own
# last checkpoint.
requeued=()
[ -n "${SLURM_RESTART_COUNT:-}" ] && requeued=(--resume latest)
restarts=${MAX_RESTARTS:-2}
[[ $restarts =~ ^[0-9]+$ && ${MIN_NODES:-1} =~ ^[1-9][0-9]*$ && ${RESTART_RANKS:-slots} =~ ^(slots|same)$ ]] || {
  echo "train: MAX_RESTARTS='${MAX_RESTARTS:-}' (a count), MIN_NODES='${MIN_NODES:-}' (1 or more)," \
    "RESTART_RANKS='${RESTART_RANKS:-}' (slots or same): one of them is not valid" >&2
  exit 2
}
if [ "${RESTART_RANKS:-slots}" = same ] && [ -n "${SLURM_GPUS_PER_TASK:-}" ]; then
  echo "train: RESTART_RANKS=same cannot restart a job of one GPU per task on fewer nodes" \
    "(each task asks for its GPU): use RESTART_RANKS=slots" >&2
  exit 2
fi
# The job's ranks: SLURM_NTASKS, which the tasks per node may exceed
# (`sbatch --nodes=3 --ntasks=4` with this script's --ntasks-per-node=2:
# SLURM_TASKS_PER_NODE 2(x3), 6 slots for 4 ranks).
code=0
run_with_restarts "$all_nodes" "${SLURM_NTASKS:-$(hostfile_slots "$all_nodes")}" "${RESTART_RANKS:-slots}" "$restarts" \
  "${MIN_NODES:-1}" -- "$bin/trainer" --config "$config" --resume latest "$@" \
  --run.out_dir "$(dirname "$run")" --run.name "$(basename "$run")" "${requeued[@]}" || code=$?
rm -f "$all_nodes"
# Under --no-kill Slurm keeps a job that lost a node (it never requeues it
# for that): past the restarts allowed, or with too few nodes, requeue it
# here, as Slurm would have without --no-kill.
if ((code != 0 && code != 2 && code != 75)) && [ -n "$lost_nodes" ]; then
  echo "train: node(s) $lost_nodes lost and no in-job restart left: the job requeues"
  code=75
fi

# A launcher can exit 0 without having run the ranks (a failed step launch):
# the run is complete only when the trainer wrote its finished.json.
if ((code == 0)) && [ ! -f "$run/finished.json" ]; then
  echo "train: the launcher exited 0 but $run/finished.json is missing: the ranks did not finish" >&2
  code=1
fi
# The signal passed on reached ranks that could not yet catch it (loading
# LibTorch's libraries takes a second or more before the trainer's handlers
# exist) and ended them; or the launcher ended on it. Nothing was lost that a
# checkpoint held: a preemption like any other.
if ((stopped && code != 0 && code != 75)); then
  echo "train: the trainer ended on the signal passed on (exit $code) before it could checkpoint"
  code=75
fi
case $code in
  0) echo "train: run $run complete" ;;
  75)
    echo "train: preempted; requeueing job $SLURM_JOB_ID to resume from its last checkpoint"
    scontrol requeue "$SLURM_JOB_ID" \
      || echo "train: could not requeue; submit the same command again to resume" >&2
    exit 75 ;;
  *) echo "train: the trainer failed (exit $code); see the log above" >&2; exit "$code" ;;
esac
