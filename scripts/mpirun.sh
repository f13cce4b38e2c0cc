#!/usr/bin/env bash
# mpirun with what this project's machines need: running as root is allowed
# (containers, CI), and more ranks than cores are allowed when asked for.
#   scripts/mpirun.sh -np 2 build/bin/trainer --config configs/default.toml
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec mpirun --oversubscribe "$@"
