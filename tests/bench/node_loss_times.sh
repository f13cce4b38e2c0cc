#!/usr/bin/env bash
# Times of an in-job recovery (docs/cluster.md, "A lost node") for a model of
# a config: 2 simulated nodes x 1 rank through launch/local.sh, the update
# not sharded; nodeb gone (every process SIGKILLed, its shell refused) a
# second after the checkpoint of step <save every>. Prints the seconds from
# the loss to the survivor's checkpoint (and its write), and to the first
# step after the restart on nodea. A benchmark, not a test: ctest never runs it.
#   tests/bench/node_loss_times.sh <build dir> <source dir> <config> <save every> [trainer options...]
#   tests/bench/node_loss_times.sh build . configs/default.toml 100
#   tests/bench/node_loss_times.sh build . configs/base.toml 2 --data.batch_tokens 2048
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2"); config=$(realpath "$3"); every=$4; shift 4
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
enter_shared_scratch node-loss-times
"$build/bin/prepare_data" --task reverse --out data/reverse > prepare.log 2>&1 || fail "prepare_data" prepare.log
write_hostfile 1 1
export NODE_SHELL_DOWN=$work/down
: > "$NODE_SHELL_DOWN"
local_sh_nodes -n 2 --hostfile hosts --restart-ranks same --max-restarts 1 -- \
  "$build/bin/trainer" --config "$config" --data.dir data/reverse --run.out_dir runs --run.name lost \
  --train.max_steps $((3 * every)) --train.save_every "$every" --train.log_every 1 \
  --train.valid_every 0 --train.save_every_minutes 0 --dist.shard_update off "$@" > lost.log 2>&1 &
job=$!
first=runs/lost/checkpoints/$(printf step_%08d "$every")
for _ in $(seq 6000); do [ -e "$first" ] && break; sleep 0.1; done
[ -e "$first" ] || fail "no checkpoint of step $every" lost.log
sleep 1
rank1=$(pids_matching "^$build/bin/trainer .*--run.name lost( |$)" | while read -r pid; do
  tr '\0' '\n' < "/proc/$pid/environ" | grep -qx OMPI_COMM_WORLD_RANK=1 && echo "$pid"; done)
echo nodeb > "$NODE_SHELL_DOWN"
kill_node_of "$rank1"
lost_at=$(date +%s)
wait "$job" || fail "local.sh failed" lost.log
awk -v lost=$((lost_at % 86400)) -v config="$(basename "$config")" '
  function at(line) { split(substr(line, 2, 8), t, ":"); return (t[1] * 3600 + t[2] * 60 + t[3] - lost + 86400) % 86400 }
  /survivor checkpoint of step .* written/ { saved = at($0); step = $0; sub(/.*of step /, "", step); sub(/ .*/, "", step)
    write = $0; sub(/.* in /, "", write); sub(/ s$/, "", write) }
  /resuming from/ { resumed = 1 }
  resumed && /\] step +[0-9]+ \|/ && !first { first = at($0) }
  END {
    if (step == "") printf "%s: no survivor checkpoint (the log says why)", config
    else printf "%s: survivor checkpoint of step %s %d s after the loss (written in %s s)", config, step, saved, write
    printf ", first step after the restart %d s after\n", first }
' lost.log
