#!/usr/bin/env bash
# "ssh" into a simulated node (tests/multinode/nodes.bash): runs COMMAND as
# ssh would on HOST, here in new UTS and mount namespaces of this machine:
# hostname HOST, a private /dev/shm (node-local POSIX shared memory) and /tmp
# (node-local files, Open MPI's session directory), and, like ssh, none of the
# caller's environment but PATH and HOME. Everything else of the file system
# (the build, /var/tmp where the tests work) is the nodes' shared file system.
#   node_shell.sh [ssh options...] HOST COMMAND...     (Open MPI's plm_rsh_agent)
# With NODE_SHELL_KEEP_ENV=1 the environment is kept and COMMAND's words are
# its arguments as given (for mpirun itself, started "on" the first node).
set -euo pipefail
while [[ ${1:-} == -* ]]; do shift; done  # ssh options Open MPI may pass
host=$1; shift
keep=${NODE_SHELL_KEEP_ENV:-0}
exec unshare --uts --mount --propagation private bash -c '
  host=$1 keep=$2; shift 2
  hostname "$host"
  mount -t tmpfs -o size=256m none /dev/shm
  mount -t tmpfs -o size=256m none /tmp
  if [ "$keep" = 1 ]; then exec env -u NODE_SHELL_KEEP_ENV "$@"; fi
  exec env -i PATH="$PATH" HOME="$HOME" bash -c "$*"' node_shell "$host" "$keep" "$@"
