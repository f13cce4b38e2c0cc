#!/usr/bin/env bash
# Evaluates a run: evaluate, once (the test split of the latest checkpoint
# unless told otherwise), or with --watch beside training, scoring each new
# checkpoint until the run has finished.
#   sbatch slurm/eval.sh RUN_DIR [evaluate options...]
#   sbatch --dependency=afterok:<train job> slurm/eval.sh runs/base --beam 4 --average-last 5
#   sbatch slurm/eval.sh runs/base --split valid --watch --poll-s 60
# Run from the checkout, or pass REPO and BUILD (see slurm/lib.bash).
#SBATCH --job-name=eval
#SBATCH --nodes=1                # machines
#SBATCH --ntasks-per-node=1      # ranks per machine (they share the decoding)
##SBATCH --gpus-per-node=1       # GPUs per machine, one per rank (remove one # on GPU nodes)
#SBATCH --cpus-per-task=1        # cores per rank (torch threads follow)
#SBATCH --time=04:00:00          # wall-clock limit (with --watch: as long as training)
##SBATCH --partition=gpu         # your cluster's partition (remove one # to use)
#SBATCH --output=%x-%j.out       # the log, in the directory sbatch was run from
set -euo pipefail
(($# >= 1)) || { echo "usage: sbatch slurm/eval.sh RUN_DIR [evaluate options...]" >&2; exit 2; }
REPO=${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}
source "$REPO/slurm/lib.bash"

run=$1; shift
announce eval "run $run"  # (evaluate --watch waits for a run not yet started)
"${launch[@]}" "$bin/evaluate" --run "$run" "$@"
