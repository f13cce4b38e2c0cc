#!/usr/bin/env bash
# The trainer in a memory cgroup, as Slurm's --mem puts a job's tasks: a
# model larger than the cgroup's limit, though far smaller than the host's
# free memory, is refused before it is built — exit 1, a message naming the
# cgroup and its limit — not killed by the kernel's OOM killer (exit 137,
# no word). The same model in a cgroup with room passes that check. The
# cgroups are made below this process's own (the v1 memory controller's, or
# v2's); skips (exit 77) where none can be made (not root, a read-only
# cgroup file system, v2 without the memory controller to delegate).
# Usage: memory_limit.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch memory-limit

skip() { echo "SKIP: $1"; exit 77; }
# This process's cgroup directory: v1's memory hierarchy, else v2's.
memory_line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup || true)
if [ -n "$memory_line" ] && [ -d /sys/fs/cgroup/memory ]; then
  parent=/sys/fs/cgroup/memory${memory_line##*:}; limit_file=memory.limit_in_bytes
else
  v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
  [ -n "$v2" ] || skip "no cgroup memory controller is mounted"
  parent=$v2$(sed -n 's/^0:://p' /proc/self/cgroup); limit_file=memory.max
  grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null \
    || echo +memory > "$parent/cgroup.subtree_control" 2>/dev/null \
    || skip "cgroup v2: cannot delegate the memory controller below $parent"
fi
made=()
make_cgroup() {  # <name> <limit in bytes>: a child cgroup with that limit
  mkdir "$parent/$1" 2>/dev/null || skip "cannot make a cgroup in $parent"
  made+=("$parent/$1")
  echo "$2" > "$parent/$1/$limit_file" || fail "cannot set $parent/$1/$limit_file"
}
remove_cgroups() {  # a cgroup is busy for a moment after its last process ended
  local cg i
  for cg in "${made[@]}"; do
    for i in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap remove_cgroups EXIT
in_cgroup() {  # <cgroup> <command...>: runs the command as a member of the cgroup
  local cg=$1; shift
  bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$parent/$cg" "$@"
}

prepare_tiny data
# ~2.4 GB of float32 parameters and buffers (model::construction_floats):
# d_model 2048, d_ff 8192, 6 + 6 layers.
big=(--model.d_model 2048 --model.heads 8 --model.d_ff 8192 --model.encoder_layers 6
     --model.decoder_layers 6 --train.max_steps 1)
small_limit=$((256 << 20))
make_cgroup "trainer-test-$$-small" $small_limit
status=0
in_cgroup "trainer-test-$$-small" timeout 300 "$build/bin/trainer" "${TINY[@]}" --run.name big "${big[@]}" \
  > big.log 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a model beyond the cgroup's limit: exit $status, expected 1" big.log
cgroup=${parent#/sys/fs/cgroup/memory}; cgroup=${cgroup#"${v2:-}"}/trainer-test-$$-small
grep -q "the model (model.d_model 2048.*needs at least 2.* GiB, and this process's cgroup $cgroup allows 0.25 GiB (its $limit_file" \
  big.log || fail "the refusal does not name the cgroup and its limit" big.log

# With room (16 GiB) the tiny model is built and trains its one step.
make_cgroup "trainer-test-$$-large" $((16 << 30))
in_cgroup "trainer-test-$$-large" timeout 300 "$build/bin/trainer" "${TINY[@]}" --run.name fits \
  --train.max_steps 1 > fits.log 2>&1 || fail "a small model in a cgroup with room" fits.log
grep -q "needs at least" fits.log && fail "a model within the limit was refused" fits.log
echo "refused beyond the cgroup's limit: $(grep -o "needs at least.*" big.log | head -1)"
