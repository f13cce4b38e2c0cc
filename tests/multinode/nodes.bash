# Simulated nodes for the multinode tests: Open MPI believes there are
# several hosts when its remote-shell agent (node_shell) starts each
# "host's" daemon in its own UTS and mount namespaces: its own hostname, a
# private /dev/shm and /tmp, the rest of the file system shared, as a
# cluster's shared file system is. mpirun itself runs "on" the first node.
# Nothing is left behind: the daemons end with mpirun, and the namespaces
# with their last process.
# Usage: source after setting $build and $src (and sourcing script_lib.bash).

# The checkout and the build are on the nodes' shared file system, also when
# they live under /tmp (a CI's clone): the node shell binds them back.
export NODE_SHELL_SHARED="$src:$build"

# Skips (exit 77) where the kernel refuses the namespaces (an unprivileged
# container); everything else of the suite runs there.
# MULTINODE_REQUIRED=1 (CI here) makes that a failure: the skip must not hide.
require_namespaces() {
  if ! unshare --uts --mount --propagation private \
       sh -c 'hostname nodex && mount -t tmpfs none /tmp' 2> /dev/null; then
    echo "SKIP: this kernel or container refuses UTS and mount namespaces (unshare)"
    [ "${MULTINODE_REQUIRED:-0}" = 1 ] && exit 1
    exit 77
  fi
}

# A scratch directory on the nodes' shared file system (/var/tmp: /tmp is
# each node's own), removed on exit, made the working directory.
enter_shared_scratch() {  # <name>
  work=$(mktemp -d "/var/tmp/$1.XXXXXX")
  trap "rm -rf \"$work\"" EXIT
  cd "$work"
}

# ./hosts: the simulated nodes and their slots, e.g. `write_hostfile 2 2`
# for nodea with 2 ranks and nodeb with 2.
write_hostfile() {  # <ranks on nodea> [ranks on nodeb ...]
  local names=(nodea nodeb nodec noded) i=0 slots
  : > hosts
  for slots in "$@"; do echo "${names[i]} slots=$slots" >> hosts; i=$((i + 1)); done
}

# mpirun over the nodes of ./hosts, started on the first of them, ranks
# filling each node's slots in order; the rest as for scripts/mpirun.sh.
# (A command, not a function, so that timeout can run it.)
mpirun_nodes=(env NODE_SHELL_KEEP_ENV=1 bash "$src/tests/multinode/node_shell" nodea
  bash "$src/scripts/mpirun.sh" --hostfile hosts
  --mca plm_rsh_agent "$src/tests/multinode/node_shell" --mca plm_rsh_no_tree_spawn 1
  --mca mpi_yield_when_idle 1 --bind-to none)  # the nodes share this machine's cores

# Trains run <name> on the nodes of ./hosts (all their slots); as trainer_run.
trainer_nodes() {  # <name> [trainer options...]
  local name=$1; shift
  timeout 600 "${mpirun_nodes[@]}" "$build/bin/trainer" "${TINY[@]}" --run.name "$name" "$@" \
    > "$name.log" 2>&1
}

# The PID of rank <rank> of run <name> (from its MPI environment: mpirun's, or
# srun's PMIx).
rank_pid() {  # <run name> <rank>
  local pid
  for pid in $(pids_matching "^$build/bin/trainer .*--run.name $1( |$)"); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxE "(OMPI_COMM_WORLD_RANK|PMIX_RANK)=$2"; then
      echo "$pid"; return 0
    fi
  done
  return 1
}

# The hostname rank <rank> of run <name> sees (its node).
node_of_pid() {  # <pid>
  nsenter --target "$1" --uts hostname
}

# launch/local.sh started on nodea, its mpirun reaching the other nodes
# through the node shell (up to 15 minutes).
local_sh_nodes() {  # [local.sh arguments... -- PROGRAM ARGS...]
  OMPI_MCA_plm_rsh_agent="$src/tests/multinode/node_shell" OMPI_MCA_plm_rsh_no_tree_spawn=1 \
    OMPI_MCA_mpi_yield_when_idle=1 NODE_SHELL_KEEP_ENV=1 timeout 900 \
    bash "$src/tests/multinode/node_shell" nodea bash "$src/launch/local.sh" "$@"
}

# A node gone: every process in the UTS namespace of <pid> (its node's) SIGKILLed.
kill_node_of() {  # <pid>
  local ns pid
  ns=$(readlink "/proc/$1/ns/uts") && [ -n "$ns" ] || return 1
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/ns/uts" 2> /dev/null)" = "$ns" ] && kill -KILL "$pid" 2> /dev/null
  done
  return 0
}

# On a test's way out (a failed check included): no job of it left running —
# local.sh first (it would start a job again), then mpirun, each only where
# its working directory is the test's ($work); then $work removed.
stop_jobs() {
  local pattern pid
  for pattern in "^bash .*/launch/local.sh " "^mpirun "; do
    for pid in $(pids_matching "$pattern"); do
      [ "$(readlink "/proc/$pid/cwd")" = "$work" ] && kill -TERM "$pid" 2> /dev/null
    done
  done
  wait || true
  rm -rf "$work"
}
