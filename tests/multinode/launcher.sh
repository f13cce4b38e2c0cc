#!/usr/bin/env bash
# Launching onto simulated nodes as a user would, through launch/local.sh with
# a hostfile: one rank on each 2-core node takes its node's cores (not this
# machine's cores / all ranks: 1 thread each, half of every node idle); the
# trainer's settings from the environment (TRAINER_*) reach the ranks on the
# second node too (mpirun forwards only what -x names).
# Usage: launcher.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch multinode-launcher
cores=$(nproc)
write_hostfile 1 1
TRAINER_PROBE=forwarded local_sh_nodes -n 2 --hostfile hosts -- \
  sh -c 'echo "$(hostname) ${TRAINER_PROBE:-missing}"' > probe.out 2> probe.log || fail "local.sh" probe.log
[ "$(sort probe.out)" = "$(printf 'nodea forwarded\nnodeb forwarded')" ] ||
  fail "TRAINER_PROBE did not reach both nodes: $(cat probe.out)" probe.log

prepare_tiny data
tiny=()  # TINY's options (pairs) but --train.threads: the default, 0 = the cores the rank may use
for ((i = 0; i < ${#TINY[@]}; i += 2)); do
  [ "${TINY[i]}" = --train.threads ] || tiny+=("${TINY[i]}" "${TINY[i + 1]}")
done
local_sh_nodes -n 2 --hostfile hosts -- "$build/bin/trainer" "${tiny[@]}" --run.name threads \
  --train.max_steps 3 > threads.log 2>&1 || fail "trainer through local.sh on two nodes" threads.log
grep -q "node nodeb: rank(s) 1 (local 0-0); rank 1: $cores thread(s)" threads.log ||
  fail "the rank on nodeb did not take its node's $cores cores" threads.log
echo "launch/local.sh on two nodes: OK ($cores threads per rank)"
