# Shared by the script tests (source it after setting $build and $src):
# a scratch directory, a tiny dataset and trainer runs on it.

# The Python that checks results against references (torch, h5py): the
# build's TEST_PYTHON (tests/CMakeLists.txt).
python=$(sed -n 's/^TEST_PYTHON:FILEPATH=//p' "$build/CMakeCache.txt")

# A scratch directory, removed on exit, made the working directory.
enter_scratch() {  # <name>
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  trap "rm -rf \"$work\"" EXIT
  cd "$work"
}

# A reverse-task dataset of 333 training, 40 validation and <test size> test
# examples over <symbols> symbols in ./<dir>.
prepare_tiny() {  # <dir> [test size] [symbols]
  "$build/bin/prepare_data" --task reverse --out "$1" --seed 3 --train-size 333 \
    --valid-size 40 --test-size "${2:-0}" --min-len 2 --max-len 9 --symbols "${3:-13}" >/dev/null
}

# prepare_data on <ranks> MPI ranks into ./<out>, shards of 400 examples;
# output in <out>.log, which is shown if it fails.
prepare_on() {  # <ranks> <out> [prepare_data options...]
  local ranks=$1 out=$2; shift 2
  bash "$src/scripts/mpirun.sh" -np "$ranks" "$build/bin/prepare_data" --out "$out" \
    --shard-size 400 "$@" > "$out.log" 2>&1 || fail "prepare_data -np $ranks $out" "$out.log"
}

# A tiny model on ./data, one thread per rank, runs in ./runs; fp32 on every
# CPU (auto would choose bf16 on one with bfloat16 instructions), since the
# tests' tolerances are fp32's.
TINY=(--data.dir data --data.batch_tokens 300 --model.d_model 32 --model.heads 4
      --model.d_ff 64 --model.encoder_layers 2 --model.decoder_layers 2
      --optim.lr 0.5 --optim.warmup_steps 4 --train.log_every 1 --train.threads 1
      --train.precision fp32 --run.out_dir runs)

# Trains run <name> on <ranks> ranks; returns the exit code. Each call writes
# a fresh <name>.log (an earlier call's of the same name is replaced), so a
# grep after the call reads that call's output only.
# TRAINER_EXTRA_ARGS (e.g. "--train.device cuda") come last: tests/gpu/ reruns
# script tests that way.
trainer_run() {  # <name> <ranks> [trainer options...]
  local name=$1 ranks=$2; shift 2
  local extra; read -ra extra <<<"${TRAINER_EXTRA_ARGS:-}"
  timeout 600 bash "$src/scripts/mpirun.sh" -np "$ranks" "$build/bin/trainer" "${TINY[@]}" \
    --run.name "$name" "$@" "${extra[@]}" > "$name.log" 2>&1
}

# The PIDs (ascending) of the processes whose command line, arguments joined
# by spaces, matches the extended regular expression <pattern>: pgrep -f
# without procps, which a GPU node's image may lack. Reads /proc.
pids_matching() {  # <pattern>
  local cmdline args pid
  for cmdline in /proc/[0-9]*/cmdline; do
    mapfile -d '' -t args 2>/dev/null < "$cmdline" || continue  # it may have ended
    pid=${cmdline#/proc/}
    if [[ "${args[*]}" =~ $1 ]]; then echo "${pid%/cmdline}"; fi
  done | sort -n
}

# Fails the test, showing a log.
fail() {  # <message> [log]
  echo "FAIL: $1"
  [ -n "${2:-}" ] && tail -30 "$2"
  exit 1
}

# Two short runs scored by `evaluate --watch` (eval/watch-valid.tsv), for the
# views of a run (plot, TensorBoard): runs/reverse on the tiny reverse task
# (BLEU), trained to step 50 and resumed to 100 (its elapsed_s starts again),
# and runs/majority, a classifier (accuracy). Validation every 10 steps (each
# new best loss is also a checkpoint).
watched_runs() {
  prepare_tiny data
  "$build/bin/prepare_data" --task majority --out majority --seed 1 --train-size 300 --valid-size 40 \
    --symbols 6 --classes 3 --min-len 4 --max-len 10 > prepare-majority.log 2>&1 || fail "prepare_data majority" prepare-majority.log
  local every=(--train.valid_every 10 --train.save_every 25 --train.keep_last 10)
  trainer_run reverse 1 "${every[@]}" --train.max_steps 50 || fail "training reverse" reverse.log
  trainer_run reverse 1 "${every[@]}" --train.max_steps 100 || fail "resuming reverse" reverse.log
  trainer_run majority 1 "${every[@]}" --train.max_steps 100 --data.dir majority || fail "training majority" majority.log
  for run in reverse majority; do
    timeout 300 "$build/bin/evaluate" --run runs/$run --split valid --watch --poll-s 0.1 --threads 1 \
      > $run-watch.log 2>&1 || fail "evaluate --watch $run" $run-watch.log
  done
}
