# Sourced by the sbatch scripts beside it: where the programs are and how the
# job's ranks start. Set these when calling sbatch (it passes the environment on):
#   REPO=<checkout>        default: the directory sbatch was run from
#   BUILD=<build dir>      default: $REPO/build (programs in $BUILD/bin)
#   LAUNCHER=srun|mpirun   default: srun

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
  mpirun) launch=(bash "$REPO/scripts/mpirun.sh" --map-by "slot:PE=${SLURM_CPUS_PER_TASK:-1}" --bind-to core) ;;
  *) echo "error: LAUNCHER=$LAUNCHER: use srun or mpirun" >&2; exit 2 ;;
esac

# The first line of each run of a job in its log.
announce() {  # <script name> <what it works on>
  echo "$1: job ${SLURM_JOB_ID:-none} SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}," \
    "${SLURM_NTASKS:-1} rank(s) on ${SLURM_JOB_NODELIST:-$(hostname)}, $2, $(date)"
}
