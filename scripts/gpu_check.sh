#!/usr/bin/env bash
# The GPU path settled in one run, on a GPU machine that has only this
# checkout (what it lacks comes in .gpu-bundle/, made beforehand by
# scripts/gpu_bundle.sh on a machine with the packages):
#
#   scripts/gpu_check.sh OUT_DIR                      # on the GPU machine
#   scripts/gpu_check.sh --stages 5,6,7,8,9 OUT_DIR   # a second call: the stages the first left
#   scripts/gpu_check.sh --dry-run --build-dir build-cuda OUT_DIR   # without a GPU: the same
#                                                     # stages on the CPU, tiny; the GPU-only ones skip
#
# (With a lent machine's run tool: carry .gpu-bundle, and build-gpu from a
# first call to a second one on the same warm machine.)
#
# Stages, most valuable first. Each appends its row to OUT_DIR/results.md
# (and prints it) and leaves OUT_DIR/<n>-<stage>.log the moment it ends, so a
# run cut off at its limit still returns what it settled; a failed stage never
# stops the next. Each runs in a session of its own under its own time limit,
# and whatever it leaves running is killed when it ends (a trainer started in
# the background, mpirun's ranks). The whole has one budget, GPU_CHECK_BUDGET_S
# (default 540 s: one 10-minute call of a lent GPU machine, with the copy
# back): a stage starts only with 20 s of it left and gets at most what is left.
#   0 machine       what the machine has (OUT_DIR/machine.md), which bundled dependencies it uses
#   1 build         the programs the checks use, on all cores (build-gpu/, or --build-dir)
#   2 nccl_parity   one rank on cuda:0 with the NCCL backend = the CPU (tests/gpu/cpu_parity.sh)
#   3 default_job   the embedded default on the GPU, train.precision auto: >= 99% exact match
#   4 base_speed    paper-base, bf16 and TF32, 25 600 target tokens per step, 20 steps, beside
#                   the fast eager PyTorch peer: tokens/s, ratio, MFU, peak memory, the step
#                   with and without data loading (OUT_DIR/4-base_speed/gpu_benchmarks.md)
#   5 shared_gpu    two ranks sharing the GPU over MPI = one rank with accumulation
#   6 beam          beam 4 on the GPU = the CPU's hypotheses
#   7 exact_resume  exact resume in deterministic mode, bf16, with preemption
#   8 profile       one profiled step of paper-base bf16: top kernels by GPU time, launches
#                   per step (OUT_DIR/8-profile.md)
#   9 extra         if time is left: 65 536 tokens per step, bf16 and fp32, the compiled peer
# On the GPU machine a stage that skips (no GPU visible, a build without
# CUDA or NCCL) counts as failed: a run that tested nothing must not pass.
#
# Environment: TORCH_PYTHON (a Python with torch built with CUDA; else
# .venv/torch, /opt/torch/.venv, python3, the first that has torch),
# GPU_BUNDLE (default .gpu-bundle), GPU_CHECK_BUDGET_S.
set -uo pipefail  # no -e: a failed stage must not stop the next
src=$(cd "$(dirname "$0")/.." && pwd)
dry=0 build=$src/build-gpu out= stages=1,2,3,4,5,6,7,8,9
usage="usage: scripts/gpu_check.sh [--dry-run] [--build-dir DIR] [--stages 1,2,...] OUT_DIR"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1; shift ;;
    --build-dir) build=${2:?--build-dir needs a folder}; shift 2 ;;
    --stages) stages=${2:?--stages needs a list such as 5,6,7}; shift 2 ;;
    -*) echo "gpu_check.sh: unknown option '$1'; $usage" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { echo "$usage" >&2; exit 2; }
[[ $stages =~ ^[1-9](,[1-9])*$ ]] || { echo "gpu_check.sh: --stages takes numbers 1-9 such as 5,6,7, not '$stages'" >&2; exit 2; }
mkdir -p "$out" "$build" && out=$(realpath "$out") build=$(realpath "$build")
bundle=$(realpath -m "${GPU_BUNDLE:-$src/.gpu-bundle}")
budget=${GPU_CHECK_BUDGET_S:-540}
[[ $budget =~ ^[0-9]+$ ]] || { echo "gpu_check.sh: GPU_CHECK_BUDGET_S must be seconds, not '$budget'" >&2; exit 2; }
start=$SECONDS
device=cuda
((dry)) && device=cpu
# A CUDA toolkit where the machine keeps it but its PATH does not name it
# (LibTorch's CMake config needs nvcc).
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

say() { echo "[gpu_check +$((SECONDS - start))s] $*" >&2; }

# ---- 0: the machine ---------------------------------------------------------
torch_python() {  # the first Python whose torch imports
  local p
  for p in "${TORCH_PYTHON:-}" "$src/.venv/torch/bin/python" /opt/torch/.venv/bin/python \
           "$(command -v python3)"; do
    if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import torch' 2>/dev/null; then echo "$p"; return; fi
  done
}
python=$(torch_python)
has_header() { echo "#include <$1>" | "${CXX:-c++}" -std=c++17 -x c++ -fsyntax-only - 2>/dev/null; }
first_line() { "$@" 2>&1 | head -1; }
torch_line() {
  "$python" - <<'PY' 2>&1 | tail -1
import sys, torch
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
print(f"{torch.__version__} (CUDA {torch.version.cuda}, NCCL {nccl}, "
      f"GPUs visible {torch.cuda.device_count()}) of {sys.executable}")
PY
}
# The bundled dependencies (scripts/gpu_bundle.sh) by the header that shows
# the machine has its own: only those it lacks go on CMake's path.
declare -A BUNDLED=([tomlplusplus]=toml++/toml.h [CLI11]=CLI/CLI.hpp
                    [nlohmann_json]=nlohmann/json.hpp [GTest]=gtest/gtest.h)
cmake_prefixes=
{
  echo "# The machine ($(date -u +%FT%TZ))"
  echo
  echo "| what | has |"
  echo "|---|---|"
  gpus=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2> /dev/null)
  echo "| GPU | ${gpus:-none visible (nvidia-smi)} |"
  echo "| cores | $(nproc) |"
  echo "| OS | $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") |"
  echo "| C++ | $(first_line "${CXX:-c++}" --version) |"
  echo "| nvcc | $(command -v nvcc || echo none): $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo -) |"
  echo "| CMake, Ninja, pkg-config | $(first_line cmake --version), $(first_line ninja --version || echo none), $(first_line pkg-config --version || echo none) |"
  echo "| MPI | $(first_line mpirun --version), mpicc $(command -v mpicc || echo none) |"
  echo "| torch | $([ -n "$python" ] && torch_line || echo "NONE: no Python with torch (TORCH_PYTHON)") |"
  for name in "${!BUNDLED[@]}"; do
    if has_header "${BUNDLED[$name]}"; then
      echo "| $name | the machine's |"
    elif [ -d "$bundle/deps/$name/usr" ]; then
      echo "| $name | bundled ($bundle/deps/$name) |"
      cmake_prefixes+=";$bundle/deps/$name/usr"
    else
      echo "| $name | MISSING (not on the machine, not in $bundle: scripts/gpu_bundle.sh) |"
    fi
  done
  hdf5=none
  for header in /usr/include/hdf5/serial/hdf5.h /usr/include/hdf5.h; do [ -f "$header" ] && hdf5=$header; done
  echo "| spdlog, SentencePiece, HDF5 | $(has_header spdlog/spdlog.h && echo spdlog || echo "spdlog NONE"), $(
    pkg-config --exists sentencepiece 2> /dev/null && echo SentencePiece || echo "SentencePiece NONE"), $hdf5 |"
  echo "| PyTorch peer | $([ -f "$bundle/peer/gpu_peer.py" ] && echo "$bundle/peer" || echo "none ($bundle/peer)") |"
} > "$out/machine.md"
cat "$out/machine.md" >&2

# ---- what the stages run (in a child bash each: exported) -------------------
build_programs() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    [ -n "$python" ] || { echo "no Python with torch: set TORCH_PYTHON"; return 1; }
    local generator=Ninja prefix
    command -v ninja > /dev/null || generator="Unix Makefiles"
    prefix=$(TORCH_PYTHON=$python bash "$src/scripts/torch_prefix.sh") || return 1
    cmake -S "$src" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_PREFIX_PATH=$prefix$cmake_prefixes" "-DTEST_PYTHON=$python" || return 1
  fi
  grep -E "^TRAINER_BUILT_(CUDA|NCCL)" "$build/CMakeCache.txt"
  cmake --build "$build" -j "$(nproc)" --target trainer prepare_data evaluate train_step_bench \
    loss_bench
}
gpu() { bash "$src/tests/gpu/$1.sh" "$build" "$src"; }
# gpu_benchmarks.sh into OUT_DIR/<n>-<name>/ (settings as environment: TOKENS, PRECISIONS, ...)
benchmark() {  # <n>-<name> [VAR=value ...]
  local dir=$out/$1; shift
  env "$@" OUT="$dir" BUILD_DIR="$build" PYTHON="$python" PEER_DIR="$bundle/peer" DRY_RUN="$dry" \
    bash "$src/tests/bench/gpu_benchmarks.sh"
}
# One profiled step (tests/bench/kernel_profile.h) and its table.
profile() {  # <size> <precision> <sentences>
  KERNEL_PROFILE="$out/8-profile.json" "$build/bench/train_step_bench" "$1" "$(nproc)" "$2" 4 "" \
    "$device" "$3" || return 1
  "$python" - "$out/8-profile.json" "$out/8-profile.md" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
lines = [f"One step: {p['device_events']} device events, {p['launches']} kernel launches from the host, "
         f"device busy {p['device_busy_ms']:.1f} ms of {p['wall_ms']:.1f} ms wall", "",
         f"| {p['what']} | calls | ms | share |", "|---|---|---|---|"]
lines += [f"| `{t['name'][:110]}` | {t['calls']} | {t['ms']:.3f} | {t['share']:.1%} |" for t in p["top"]]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
assert p["top"], "the profile is empty"
PY
}
export -f build_programs gpu benchmark profile
export src build out bundle python dry device cmake_prefixes

# ---- the stages -------------------------------------------------------------
results=$out/results.md
{
  echo "# GPU check$( ((dry)) && echo " (dry run: the CPU, tiny sizes)")"
  echo
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo "no GPU") ·" \
       "commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "?")$(
         [ -n "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] && echo "+changes") ·" \
       "$(date -u +%FT%TZ) · budget ${budget} s · stages $stages"
  echo
  echo "| # | stage | result | seconds | last words |"
  echo "|---|---|---|---|---|"
} > "$results"

row() {  # <n> <stage> <result> <seconds> <text>
  local text=${5//|/\\|}
  echo "| $1 | $2 | $3 | $4 | ${text:0:220} |" | tee -a "$results"
}

# Every process still in session <sid> (/proc/<pid>/stat's 6th field; the
# 2nd, the command, is in parentheses and may hold spaces), killed.
kill_session() {  # <sid>
  local stat fields pid sid
  for stat in /proc/[0-9]*/stat; do
    read -r fields < "$stat" 2> /dev/null || continue
    pid=${stat#/proc/} pid=${pid%/stat}
    fields=${fields##*) }  # state ppid pgrp session ...
    read -r _ _ _ sid _ <<< "$fields"
    [ "$sid" = "$1" ] && kill -KILL "$pid" 2> /dev/null
  done
  return 0
}

# stage <n> <name> <limit s> <command...>: the command in a session of its
# own (setsid: as a background job of this shell it leads no process group,
# so it becomes the session's leader without forking, and $! names the
# session), under its time limit; its output in <n>-<name>.log, its row;
# whatever it left running killed. Exit 77 is a skip: a failure on the GPU
# machine, where nothing may skip.
stage() {
  local n=$1 name=$2 limit=$3; shift 3
  [[ ",$stages," == *",$n,"* ]] || return 0
  local left=$((budget - (SECONDS - start))) log=$out/$n-$name.log
  if ((left < 20)); then row "$n" "$name" "not run" 0 "no time left of the $budget s"; return; fi
  ((limit > left)) && limit=$left
  say "stage $n $name (at most $limit s)"
  local begin=$SECONDS rc result
  # bash -c: the command may be one of the functions above (exported)
  setsid timeout --kill-after=10 "$limit" bash -c '"$@"' stage "$@" > "$log" 2>&1 < /dev/null &
  local session=$!
  wait "$session"
  rc=$?
  [ "$session" != "$own_session" ] && kill_session "$session"
  case $rc in
    0) result=passed ;;
    77) if ((dry)); then result=skipped; else result="FAILED (skipped on the GPU machine)"; fi ;;
    124 | 137) result="TIMED OUT after $limit s" ;;
    *) result="FAILED (exit $rc)" ;;
  esac
  row "$n" "$name" "$result" $((SECONDS - begin)) "$(grep -v '^\s*$' "$log" | tail -1)"
}
own_session=$(read -r f < /proc/$$/stat; f=${f##*) }; read -r _ _ _ s _ <<< "$f"; echo "$s")

stage 1 build 300 build_programs
stage 2 nccl_parity 120 gpu cpu_parity
stage 3 default_job 150 env GPU_PRECISIONS=auto bash "$src/tests/gpu/default_job_gpu.sh" "$build" "$src"
if ((dry)); then
  stage 4 base_speed 240 benchmark 4-base_speed TOKENS=480 PRECISIONS=fp32 STEPS=4 PEERS=fast
else
  stage 4 base_speed 240 benchmark 4-base_speed TOKENS=25600 "PRECISIONS=bf16 tf32" STEPS=20 PEERS=fast
fi
stage 5 shared_gpu 200 gpu shared_gpu_invariance
stage 6 beam 120 gpu beam_gpu_vs_cpu
stage 7 exact_resume 240 env GPU_PRECISIONS=bf16 bash "$src/tests/gpu/exact_resume_gpu.sh" "$build" "$src"
if ((dry)); then
  stage 8 profile 60 profile default fp32 40
  stage 9 extra 240 benchmark 9-extra TOKENS=960 PRECISIONS=fp32 STEPS=4 "PEERS=fast|fast --compile"
else
  stage 8 profile 60 profile base bf16 800
  stage 9 extra 600 benchmark 9-extra TOKENS=65536 "PRECISIONS=bf16 fp32" STEPS=20 "PEERS=fast|fast --compile"
fi
say "done in $((SECONDS - start)) s: $results"
cat "$results"
! grep -qE '\| (FAILED|TIMED OUT)' "$results"
