#!/usr/bin/env bash
# The main job on the embedded default, end to end on this machine:
#   prepare the synthetic reverse task -> train on 2 MPI ranks -> evaluate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ranks=${RANKS:-2}

build/bin/prepare_data --task reverse --out data/reverse --seed 1 --force \
  --train-size 20000 --valid-size 500 --test-size 500 --min-len 4 --max-len 10 --symbols 20
bash scripts/mpirun.sh -np "$ranks" build/bin/trainer --config configs/default.toml --resume none  # a fresh run each time
build/bin/evaluate --run runs/default --split test
