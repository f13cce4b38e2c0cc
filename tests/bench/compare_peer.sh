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

# name: d_model heads layers d_ff vocab sentences-per-step length
declare -A SIZE=(
  [default]="128 4 2 512 24 160 12"
  [small]="256 4 3 1024 8000 64 32"
  [base]="512 8 6 2048 32000 32 32")

ours() {  # size ranks threads -> tokens/s
  read -r d h l ff v sents len <<<"${SIZE[$1]}"
  local data=$work/data-$1
  [ -d "$data" ] || "$build/bin/prepare_data" --task copy --out "$data" --seed 1 \
      --train-size $((sents * (steps + 2))) --valid-size 0 --test-size 0 \
      --min-len $((len - 1)) --max-len $((len - 1)) --symbols $((v - 4)) >/dev/null
  rm -rf "$work/runs"
  # One rank runs without mpirun: mpirun would bind it to one core.
  local launch=("$build/bin/trainer")
  [ "$2" -gt 1 ] && launch=(bash "$src/scripts/mpirun.sh" -np "$2" "$build/bin/trainer")
  "${launch[@]}" --run.out_dir "$work/runs" \
      --data.dir "$data" --data.batch_tokens $((sents * len)) --data.max_len "$len" \
      --model.d_model "$d" --model.heads "$h" --model.encoder_layers "$l" \
      --model.decoder_layers "$l" --model.d_ff "$ff" --model.dropout 0.1 \
      --train.max_steps "$steps" --train.log_every 2 --train.save_every 0 \
      --train.threads "$3" --optim.warmup_steps 4000 >"$work/ours.log" 2>&1 \
    || { tail -5 "$work/ours.log" >&2; echo "failed"; return; }
  # median of the timed windows, the first (start-up) window excluded
  /usr/bin/python3 -c "
import json, statistics, sys
rows = [json.loads(l) for l in open('$work/runs/default/metrics.jsonl')][1:]
print(round(statistics.median(r['tokens_per_s'] for r in rows)))"
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
