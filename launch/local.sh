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
#
# With a hostfile, a job that fails (a node lost, a rank killed or hung: any
# exit but 0, 2 and 75) is started again within this invocation on the nodes
# that still answer, and the trainer resumes from its latest checkpoint —
# which its survivors made the last step every rank completed
# (docs/cluster.md, "A lost node"):
#   --max-restarts R     at most R restarts (default 2; 0: none)
#   --min-nodes M        only while at least M nodes answer (default 1)
#   --restart-ranks slots|same   the nodes' slots (default: one rank per GPU
#                        or per slot) or the same number of ranks, several to
#                        a slot (CPU ranks: the same world size, so the same
#                        sums, bit for bit)
set -euo pipefail
usage() {
  echo "usage: launch/local.sh -n N [--threads-per-rank T] [--hostfile FILE [--max-restarts R]" \
    "[--min-nodes M] [--restart-ranks slots|same]] -- PROGRAM [ARGS...]" >&2
  exit 2
}
ranks="" threads="" hostfile="" max_restarts=2 min_nodes=1 restart_ranks=slots
while (($#)) && [ "$1" != -- ]; do
  (($# >= 2)) || usage
  case $1 in
    -n) ranks=$2 ;;
    --threads-per-rank) threads=$2 ;;
    --hostfile) hostfile=$2 ;;
    --max-restarts) max_restarts=$2 ;;
    --min-nodes) min_nodes=$2 ;;
    --restart-ranks) restart_ranks=$2 ;;
    *) usage ;;
  esac
  shift 2
done
(($# >= 2)) || usage  # "--" and the program
[[ $ranks =~ ^[1-9][0-9]*$ && ${threads:-1} =~ ^[1-9][0-9]*$ && $max_restarts =~ ^[0-9]+$ &&
  $min_nodes =~ ^[1-9][0-9]*$ && $restart_ranks =~ ^(slots|same)$ ]] || usage
mpirun_sh=$(dirname "$0")/../scripts/mpirun.sh
cores=$(nproc)

# The mpirun command of one run of the job, <ranks> ranks on <hostfile>'s
# nodes ("" for this machine), into the array `cmd`; <unbound> 1: more ranks
# than the nodes' slots (a restart keeping its ranks on fewer nodes).
job_command() {  # <hostfile> <ranks> [unbound]
  local hosts=$1 n=$2 unbound=${3:-0} t
  if [ -n "$hosts" ] && { [ -z "$threads" ] || ((unbound)); }; then
    echo "launch: $n ranks on the nodes of $hosts, unbound, each with its node's cores / its node's ranks" >&2
    cmd=(env -u OMP_NUM_THREADS bash "$mpirun_sh" -np "$n" --hostfile "$hosts" --bind-to none)
    return
  fi
  t=${threads:-$((cores / n > 0 ? cores / n : 1))}
  cmd=(bash "$mpirun_sh" -np "$n" -x "OMP_NUM_THREADS=$t")
  if [ -n "$hosts" ]; then
    cmd+=(--hostfile "$hosts" --map-by "slot:PE=$t" --bind-to core)
  elif ((n * t <= cores)); then
    cmd+=(--map-by "slot:PE=$t" --bind-to core)
  else
    echo "launch: $n ranks x $t threads > $cores cores: ranks unbound, sharing the cores" >&2
    cmd+=(--bind-to none)
  fi
}

if [ -n "$hostfile" ] && ((max_restarts > 0)); then
  source "$(dirname "$0")/in_job_restart.bash"
  # A node answers when mpirun, through the same remote shell as the job
  # (ssh, or plm_rsh_agent), runs `true` on it.
  probe_command() {  # <node>
    cmd=(bash "$mpirun_sh" --host "$1" -np 1 true)
  }
  # INT, TERM, HUP and USR1 go to mpirun (held until it starts) and end the
  # restarts; USR1 is a preemption: the trainer checkpoints and exits 75.
  stopped=0 child="" held_signal=""
  for signal in INT TERM HUP USR1; do
    # shellcheck disable=SC2064  # the signal's name now, the child's pid when it comes
    trap "stopped=1; if [ -n \"\$child\" ]; then kill -$signal \"\$child\" 2> /dev/null; else held_signal=$signal; fi" "$signal"
  done
  code=0
  run_with_restarts "$hostfile" "$ranks" "$restart_ranks" "$max_restarts" "$min_nodes" "$@" || code=$?
  exit "$code"
fi
shift  # "--"
job_command "$hostfile" "$ranks"
exec "${cmd[@]}" "$@"
