# Shared by the benchmark scripts (source it): model sizes and one trainer run.
# Needs: $src (checkout), $build (build dir), $work (scratch dir), $steps.

# name: d_model heads layers d_ff vocab sentences-per-step length
declare -A SIZE=(
  [default]="128 4 2 512 24 160 12"
  [small]="256 4 3 1024 8000 64 32"
  [base]="512 8 6 2048 32000 32 32"
  [host]="64 8 6 256 64 2 8")  # base's layers and heads at negligible compute: the host's cost

# run_trainer <size> <ranks> <threads> [trainer options...]
# Trains <steps> steps of the size on a synthetic copy task (SENTENCES=n: n
# sentences per step instead of the size's); the run directory is
# $work/runs/default (metrics.jsonl), the log $work/ours.log. Returns non-zero on failure.
run_trainer() {
  local size=$1 ranks=$2 threads=$3; shift 3
  read -r d h l ff v sents len <<<"${SIZE[$size]}"
  sents=${SENTENCES:-$sents}
  local data=$work/data-$size-$sents
  [ -d "$data" ] || "$build/bin/prepare_data" --task copy --out "$data" --seed 1 \
      --train-size $((sents * (steps + 2))) --valid-size 0 --test-size 0 \
      --min-len $((len - 1)) --max-len $((len - 1)) --symbols $((v - 4)) >/dev/null
  rm -rf "$work/runs"
  # One rank runs without mpirun (it would bind it to one core); several are
  # bound to cores, threads each.
  local launch=("$build/bin/trainer")
  [ "$ranks" -gt 1 ] && launch=(bash "$src/scripts/mpirun.sh" -np "$ranks"
                                --map-by "slot:PE=$threads" "$build/bin/trainer")
  "${launch[@]}" --run.out_dir "$work/runs" \
      --data.dir "$data" --data.batch_tokens $((sents * len)) --data.max_len "$len" \
      --model.d_model "$d" --model.heads "$h" --model.encoder_layers "$l" \
      --model.decoder_layers "$l" --model.d_ff "$ff" --model.dropout 0.1 \
      --train.max_steps "$steps" --train.log_every 2 --train.save_every 0 \
      --train.threads "$threads" --optim.warmup_steps 4000 "$@" >"$work/ours.log" 2>&1 \
    || { tail -5 "$work/ours.log" >&2; return 1; }
}

# metric <python expression over r, a metrics.jsonl row>: its median over the
# timed windows of the last run, the first (start-up) window excluded.
metric() {
  /usr/bin/python3 -c "
import json, statistics
rows = [json.loads(l) for l in open('$work/runs/default/metrics.jsonl')][1:]
print(statistics.median($1 for r in rows))"
}
