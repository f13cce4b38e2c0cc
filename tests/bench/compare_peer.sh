#!/usr/bin/env bash
# Trainer vs the PyTorch reference (../shared/peer/annotated_train.py), same
# sizes, batch and threads, run one after the other in this one invocation.
# Prints a markdown table of target tokens/s (median of timed windows).
#
#   tests/bench/compare_peer.sh [default|small|base ...]     (default: small base)
#   PEER=/path/to/annotated_train.py MODES="1x1 1x2 2x1" STEPS=12
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
peer=${PEER:-$src/../shared/peer/annotated_train.py}
modes=${MODES:-"1x1 1x2 2x1"}   # ranks x threads
steps=${STEPS:-12}
work=$(mktemp -d /tmp/bench-peer.XXXXXX)
trap 'rm -rf "$work"' EXIT
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(small base)

source "$src/tests/bench/bench_lib.sh"

ours() {  # size ranks threads -> tokens/s
  run_trainer "$@" || { echo "failed"; return; }
  printf '%.0f\n' "$(metric "r['tokens_per_s']")"
}

theirs() {  # size ranks threads -> tokens/s
  read -r d h l ff v sents len <<<"${SIZE[$1]}"
  local args=(--d-model "$d" --heads "$h" --layers "$l" --ff "$ff" --vocab "$v"
              --batch-sents "$sents" --src-len "$len" --tgt-len "$len" --steps "$steps" --threads "$3")
  [ "$2" -gt 1 ] && args+=(--ddp --nproc "$2")
  /usr/bin/python3 "$peer" "${args[@]}" 2>/dev/null | sed -n 's/^RESULT //p' |
    /usr/bin/python3 -c "import json, sys; print(round(json.load(sys.stdin)['agg_tok_per_s']))"
}

echo "| size | ranks x threads | trainer tok/s | PyTorch eager tok/s | ratio |"
echo "|---|---|---|---|---|"
for size in "${sizes[@]}"; do
  for mode in $modes; do
    r=${mode%x*}; t=${mode#*x}
    a=$(ours "$size" "$r" "$t"); b=$(theirs "$size" "$r" "$t")
    ratio=$(/usr/bin/python3 -c "print(f'{$a / $b:.2f}')" 2>/dev/null || echo "-")
    echo "| $size | $mode | $a | $b | $ratio |"
  done
done
