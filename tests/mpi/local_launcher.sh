#!/usr/bin/env bash
# launch/local.sh: N ranks, each bound to its own T cores with
# OMP_NUM_THREADS=T (T = cores / N by default), also with a hostfile (this
# machine's) and T given; with a hostfile and no T, unbound; more ranks x
# threads than cores run unbound; bad command lines exit 2; the trainer runs
# through it.
# Usage: local_launcher.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch local-launcher
cores=$(nproc)

# What each rank sees, one line a rank: "<usable cores> <OMP_NUM_THREADS> <first usable core>".
ranks_see() {  # [local.sh options...]
  timeout 120 bash "$src/launch/local.sh" "$@" -- \
    sh -c 'echo "$(nproc) $OMP_NUM_THREADS $(grep Cpus_allowed_list /proc/self/status | cut -f2)"' 2> launch.log
}
expect() {  # <expected lines, sorted> <local.sh options...>
  local want=$1; shift
  got=$(ranks_see "$@" | sort)
  [ "$got" = "$want" ] || fail "local.sh $*: ranks saw
$got
expected
$want" launch.log
}

# One rank per core, bound: one core each, all different.
got=$(ranks_see -n "$cores")
[ "$(cut -d' ' -f1,2 <<< "$got" | sort -u)" = "1 1" ] || fail "-n $cores: $got" launch.log
[ "$(cut -d' ' -f3 <<< "$got" | sort -u | wc -l)" = "$cores" ] || fail "-n $cores: shared cores: $got" launch.log
# The same through a hostfile naming this machine, with the threads given;
# without them, unbound (each rank takes its node's cores / its node's ranks:
# tests/multinode/launcher.sh).
echo "localhost slots=$cores" > hosts
[ "$(ranks_see -n "$cores" --hostfile hosts --threads-per-rank 1 | sort)" = "$(sort <<< "$got")" ] ||
  fail "--hostfile --threads-per-rank 1" launch.log
expect "$(for _ in $(seq "$cores"); do echo "$cores  0-$((cores - 1))"; done)" -n "$cores" --hostfile hosts
grep -q "its node's cores / its node's ranks" launch.log || fail "no word on unbound ranks" launch.log
# One rank with every core.
expect "$cores $cores 0-$((cores - 1))" -n 1
expect "$cores $cores 0-$((cores - 1))" -n 1 --threads-per-rank "$cores"
# More ranks x threads than cores: unbound, said so.
expect "$(for _ in 0 1; do echo "$cores $cores 0-$((cores - 1))"; done)" -n 2 --threads-per-rank "$cores"
grep -q "ranks unbound" launch.log || fail "no word on unbound ranks" launch.log

for bad in "-n 0" "-n x" "-n 2 --threads-per-rank 0" "-n 2 --bogus x --" "-n 2 --" "-n 2 true" "-n"; do
  code=0; bash "$src/launch/local.sh" $bad > /dev/null 2> bad.log || code=$?
  [ "$code" = 2 ] && grep -q "usage:" bad.log || fail "local.sh $bad: exit $code, expected 2 with usage" bad.log
done

prepare_tiny data
timeout 300 bash "$src/launch/local.sh" -n 2 -- "$build/bin/trainer" "${TINY[@]}" --run.name local \
  --train.max_steps 5 > local.log 2>&1 || fail "trainer through local.sh" local.log
[ "$(readlink runs/local/checkpoints/latest)" = step_00000005 ] || fail "no final checkpoint" local.log
echo "launch/local.sh: OK ($cores cores)"
