# Sourced by the sbatch scripts beside it: where the programs are and how the
# job's ranks start. Set these when calling sbatch (it passes the environment on):
#   REPO=<checkout>        default: the directory sbatch was run from
#   BUILD=<build dir>      default: $REPO/build (programs in $BUILD/bin)
#   LAUNCHER=srun|mpirun   default: srun
# and for the in-job restart after a lost node (train.sh; docs/cluster.md, "A lost node"):
#   MAX_RESTARTS=R         at most R restarts within the job (default 2; 0: none)
#   MIN_NODES=M            only while at least M of its nodes answer (default 1)
#   RESTART_RANKS=slots|same   the tasks of the nodes left (default: one rank
#                          per GPU) or the same number of ranks, several to a
#                          node's CPUs (CPU ranks: the same sums, bit for bit)

bin=${BUILD:-$REPO/build}/bin
if [ ! -x "$bin/trainer" ]; then
  echo "error: no programs in $bin: build the project (scripts/build.sh) or pass BUILD=<build dir> to sbatch" >&2
  exit 1
fi

# The command that starts one MPI rank per Slurm task of the job: "${launch[@]}" <program...>.
# MPI gives each rank its rank, world size and local rank; torch threads
# follow the CPUs the rank may use.
case ${LAUNCHER:-srun} in
  # Open MPI joins the Slurm step through PMIx (Debian's Open MPI has no PMI2
  # support). Slurm 22.05's srun does not inherit --cpus-per-task from sbatch.
  # --kill-on-bad-exit: a rank that fails ends the step at once, instead of
  # its peers waiting in their next collective until the watchdog fires.
  srun) launch=(srun --mpi=pmix --kill-on-bad-exit=1 --cpus-per-task="${SLURM_CPUS_PER_TASK:-1}") ;;
  # mpirun reads the allocation from Slurm; each rank is bound to its CPUs.
  # -np: the job's tasks, which the allocation's slots (its tasks per node)
  # may exceed (--nodes=3 --ntasks=4 with --ntasks-per-node=2: 6 slots), and
  # mpirun without -np fills every slot.
  mpirun)
    mpirun_binding=(--map-by "slot:PE=${SLURM_CPUS_PER_TASK:-1}" --bind-to core)
    launch=(bash "$REPO/scripts/mpirun.sh" ${SLURM_NTASKS:+-np "$SLURM_NTASKS"} "${mpirun_binding[@]}") ;;
  *) echo "error: LAUNCHER=$LAUNCHER: use srun or mpirun" >&2; exit 2 ;;
esac

# The job's nodes with their tasks, "node slots=N" a line (a hostfile), from
# SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE ("2(x3),1": 2 on each of the
# first three, 1 on the fourth).
job_nodes() {
  local part parts counts=() i
  IFS=, read -ra parts <<< "${SLURM_TASKS_PER_NODE:-1}"
  for part in "${parts[@]}"; do
    if [[ $part =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then
      for ((i = 0; i < BASH_REMATCH[2]; i++)); do counts+=("${BASH_REMATCH[1]}"); done
    else
      counts+=("$part")
    fi
  done
  paste -d ' ' <(scontrol show hostnames "${SLURM_JOB_NODELIST:-$(hostname -s)}") \
    <(printf 'slots=%s\n' "${counts[@]}")
}

# The first line of each run of a job in its log.
announce() {  # <script name> <what it works on>
  echo "$1: job ${SLURM_JOB_ID:-none} SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}," \
    "${SLURM_NTASKS:-1} rank(s) on ${SLURM_JOB_NODELIST:-$(hostname)}, $2, $(date)"
}
