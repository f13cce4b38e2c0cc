#!/usr/bin/env bash
# mpirun with what this project's machines need: running as root is allowed
# (containers, CI), more ranks than cores are allowed when asked for, and the
# trainer's settings from the environment (TRAINER_*, e.g.
# TRAINER_STARTUP_TIMEOUT_S) reach the ranks on every node: mpirun passes its
# own environment to the ranks of its own node only, the others get what
# `-x` names.
#   scripts/mpirun.sh -np 2 build/bin/trainer --config configs/default.toml
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
forward=()
for name in $(compgen -e); do
  if [[ $name == TRAINER_* ]]; then forward+=(-x "$name"); fi
done
exec mpirun --oversubscribe "${forward[@]}" "$@"
