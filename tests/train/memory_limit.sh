#!/usr/bin/env bash
# The trainer in a memory cgroup, as Slurm's --mem puts a job's tasks: a
# model larger than the cgroup's limit, though far smaller than the host's
# free memory, is refused before it is built — exit 1, a message naming the
# cgroup and its limit — not killed by the kernel's OOM killer (exit 137,
# no word); so is a model whose weights fit but whose training (gradients,
# Adam's moments) does not. A tiny model in a cgroup with room trains its step. The cgroups
# are made below this process's own (v1's memory controller), or (v2) below
# the nearest cgroup above it that hands the memory controller to its
# children; skips (exit 77) where none can be made (not root, a read-only
# cgroup file system).
# Usage: memory_limit.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch memory-limit

skip() { echo "SKIP: $1"; exit 77; }
# mountinfo(5): the root and mount point of the first mount of file system
# type $1 whose super-options list $2 (the fields after " - ").
mount_of() {
  awk -v type="$1" -v option="$2" '{
    for (i = 7; i <= NF; i++) if ($i == "-") break
    if ($(i + 1) == type && ("," $(i + 3) ",") ~ ("," option ",")) { print $4, $5; exit }
  }' /proc/self/mountinfo
}
# This process's cgroup directory: v1's memory hierarchy, else v2's.
read -r root mount < <(mount_of cgroup memory) || true
line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup || true)
if [ -n "${mount:-}" ] && [ -n "$line" ]; then
  path=${line#*:*:}; limit_file=memory.limit_in_bytes; v2=
else
  read -r root mount < <(mount_of cgroup2 "[^,]*") || skip "no cgroup memory controller is mounted"
  path=$(sed -n 's/^0:://p' /proc/self/cgroup); limit_file=memory.max; v2=1
fi
[ "$root" = / ] && root=
[[ "$path" == "$root"* ]] || skip "this process's cgroup $path is not under the mount of $root"
parent=$mount${path#"$root"}; parent=${parent%/}
enabled_here=
if [ -n "$v2" ]; then  # a child gets memory.max only where its parent delegates memory
  until grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null; do
    if [ "$parent" = "$mount" ]; then
      echo +memory > "$parent/cgroup.subtree_control" 2>/dev/null \
        || skip "cgroup v2: cannot delegate the memory controller at $mount"
      enabled_here=1
    else
      parent=$(dirname "$parent")
    fi
  done
fi
made=()
make_cgroup() {  # <name> <limit in bytes>: a child cgroup with that limit
  mkdir "$parent/$1" 2>/dev/null || skip "cannot make a cgroup in $parent"
  made+=("$parent/$1")
  echo "$2" > "$parent/$1/$limit_file" || fail "cannot set $parent/$1/$limit_file"
}
remove_cgroups() {  # what is left in them ended; a cgroup is busy for a moment after
  local cg i
  for cg in "${made[@]}"; do
    xargs -r kill -9 < "$cg/cgroup.procs" 2>/dev/null || true
    for i in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
    [ -d "$cg" ] && echo "WARNING: could not remove the test's cgroup $cg"
  done
  [ -n "$enabled_here" ] && { echo -memory > "$mount/cgroup.subtree_control"; } 2>/dev/null
  rm -rf "$work"
}
trap remove_cgroups EXIT
in_cgroup() {  # <cgroup> <command...>: runs the command as a member of the cgroup
  local cg=$1; shift
  bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$parent/$cg" "$@"
}

prepare_tiny data
# ~2.6 GiB of float32 parameters and buffers (model::construction_floats):
# d_model 2048, d_ff 8192, 6 + 6 layers. A limit of 1 GiB: room for the
# program itself (LibTorch's libraries, CUDA's in the GPU flavour).
big=(--model.d_model 2048 --model.heads 8 --model.d_ff 8192 --model.encoder_layers 6
     --model.decoder_layers 6 --train.max_steps 1)
make_cgroup "trainer-test-$$-small" $((1 << 30))
status=0
in_cgroup "trainer-test-$$-small" timeout 300 "$build/bin/trainer" "${TINY[@]}" --run.name big \
  "${big[@]}" > big.log 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a model beyond the cgroup's limit: exit $status, expected 1" big.log
cgroup=$root${parent#"$mount"}/trainer-test-$$-small
grep -qF "and this process's cgroup $cgroup allows 1 GiB (its $limit_file" big.log \
  || fail "the refusal does not name the cgroup ($cgroup) and its limit" big.log
grep -qE "the model \(model.d_model 2048.* needs at least 10\.[0-9]+ GiB" big.log \
  || fail "the refusal does not say what the model needs (4 copies of 2.6 GiB)" big.log

# ~0.4 GiB of weights (d_model 768, d_ff 3072, 6 + 6 layers): they fit in 1
# GiB, training does not (their gradients and Adam's two moments beside
# them: ~1.6 GiB). Refused before it is built, naming what training holds,
# not killed once the gradients are touched.
mid=(--model.d_model 768 --model.heads 8 --model.d_ff 3072 --model.encoder_layers 6
     --model.decoder_layers 6 --train.max_steps 1)
status=0
in_cgroup "trainer-test-$$-small" timeout 300 "$build/bin/trainer" "${TINY[@]}" --run.name mid \
  "${mid[@]}" > mid.log 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "weights that fit, training that does not: exit $status, expected 1" mid.log
grep -qE "the model \(model.d_model 768.* with what training holds beside it \(4 copies.* needs at least 1\.[0-9]+ GiB" \
  mid.log || fail "the refusal does not say what training holds" mid.log

# With room (16 GiB) the tiny model is built and trains its one step.
make_cgroup "trainer-test-$$-large" $((16 << 30))
in_cgroup "trainer-test-$$-large" timeout 300 "$build/bin/trainer" "${TINY[@]}" --run.name fits \
  --train.max_steps 1 > fits.log 2>&1 || fail "a tiny model in a cgroup with room" fits.log
echo "refused beyond the cgroup's limit: $(grep -o "needs at least.*" big.log | head -1)"
