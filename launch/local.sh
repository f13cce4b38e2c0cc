#!/usr/bin/env bash
# Starts N ranks of a program with mpirun, each bound to its own T cores (and
# so running T torch threads), on this machine or on the machines of a hostfile.
#   launch/local.sh -n 4 [--threads-per-rank T] [--hostfile FILE] -- build/bin/trainer --config c.toml
# T defaults to this machine's cores / N. When N x T exceeds this machine's
# cores (and no hostfile is given), the ranks run unbound and share the cores.
# Several machines: a hostfile names them with their ranks ("slots"), one a line,
#     node1 slots=4
#     node2 slots=4
# and -n 8 --hostfile FILE starts ranks 0-3 on node1 and 4-7 on node2; the same
# paths must exist on every machine, and mpirun reaches them by ssh. This
# machine's cores say nothing of theirs: without --threads-per-rank the ranks
# run unbound and each takes its own node's cores / its node's ranks (the
# trainer's train.threads = 0); with it, each is bound to T cores of its node.
set -euo pipefail
usage() {
  echo "usage: launch/local.sh -n N [--threads-per-rank T] [--hostfile FILE] -- PROGRAM [ARGS...]" >&2
  exit 2
}
ranks="" threads="" hostfile=""
while (($#)) && [ "$1" != -- ]; do
  (($# >= 2)) || usage
  case $1 in
    -n) ranks=$2 ;;
    --threads-per-rank) threads=$2 ;;
    --hostfile) hostfile=$2 ;;
    *) usage ;;
  esac
  shift 2
done
(($# >= 2)) || usage  # "--" and the program
shift
[[ $ranks =~ ^[1-9][0-9]*$ && ${threads:-1} =~ ^[1-9][0-9]*$ ]] || usage
cores=$(nproc)
mpi=(-np "$ranks")
if [ -n "$hostfile" ] && [ -z "$threads" ]; then
  echo "launch: $ranks ranks on the nodes of $hostfile, unbound, each with its node's cores / its node's ranks" >&2
  exec env -u OMP_NUM_THREADS bash "$(dirname "$0")/../scripts/mpirun.sh" "${mpi[@]}" \
    --hostfile "$hostfile" --bind-to none "$@"
fi
threads=${threads:-$((cores / ranks > 0 ? cores / ranks : 1))}
mpi+=(-x "OMP_NUM_THREADS=$threads")
if [ -n "$hostfile" ]; then
  mpi+=(--hostfile "$hostfile" --map-by "slot:PE=$threads" --bind-to core)
elif ((ranks * threads <= cores)); then
  mpi+=(--map-by "slot:PE=$threads" --bind-to core)
else
  echo "launch: $ranks ranks x $threads threads > $cores cores: ranks unbound, sharing the cores" >&2
  mpi+=(--bind-to none)
fi
exec bash "$(dirname "$0")/../scripts/mpirun.sh" "${mpi[@]}" "$@"
