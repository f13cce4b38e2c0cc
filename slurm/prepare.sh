#!/usr/bin/env bash
# Prepares a dataset: prepare_data with one rank per Slurm task (the dataset
# does not depend on the number of ranks).
#   sbatch slurm/prepare.sh DATA_DIR [prepare_data options...]
#   sbatch slurm/prepare.sh data/de-en --task text --vocab spm --train-src train.de ...
# Run from the checkout, or pass REPO and BUILD (see slurm/lib.bash).
#SBATCH --job-name=prepare
#SBATCH --nodes=1                # machines
#SBATCH --ntasks-per-node=2      # ranks per machine (CPU work: up to its cores)
#SBATCH --cpus-per-task=1        # cores per rank
#SBATCH --time=02:00:00          # wall-clock limit
##SBATCH --partition=cpu         # your cluster's partition (remove one # to use)
#SBATCH --output=%x-%j.out       # the log, in the directory sbatch was run from
set -euo pipefail
(($# >= 1)) || { echo "usage: sbatch slurm/prepare.sh DATA_DIR [prepare_data options...]" >&2; exit 2; }
REPO=${REPO:-${SLURM_SUBMIT_DIR:-$PWD}}
source "$REPO/slurm/lib.bash"

out=$1; shift
announce prepare "dataset $out"
"${launch[@]}" "$bin/prepare_data" --out "$out" "$@"
