#!/usr/bin/env bash
# The GPU path settled in one call of a lent GPU machine (minutes of device
# time, start-up included), its programs made beforehand on another machine
# (scripts/gpu_kit.sh -> .gpu-kit/, carried with the checkout):
#
#   scripts/gpu_check.sh --archive $OUT/gpu-check.tar.gz /tmp/gpu-check   # on the GPU machine
#   scripts/gpu_check.sh --stages 5,6 --archive ... DIR    # a second call: the stages the first left
#   scripts/gpu_check.sh --dry-run --kit KIT OUT_DIR       # without a GPU: the same stages on
#                                                          # the CPU, tiny; the GPU-only ones skip
#
# Stages, most valuable first. Each appends its row to OUT_DIR/results.md
# (and prints it) and leaves OUT_DIR/<n>-<stage>.log the moment it ends; with
# --archive FILE the whole of OUT_DIR is packed into FILE after every stage,
# results.md beside it (two files: what a lent machine sends back), so a call
# cut off at its limit still returns what it settled. A failed stage never
# stops the next. Each runs in a session of its own under its own time limit,
# and whatever it leaves running is killed when it ends (a trainer started in
# the background, mpirun's ranks). The whole has one budget,
# GPU_CHECK_BUDGET_S (default 420 s: a call of a 15-minute lease that leaves
# room for a second); a stage starts only where its whole limit fits in what
# is left, else its row says "not run" and what it needed. Stages 0 and 1
# always run, whatever is left; --stages picks among 2-9.
#   0 machine       what the machine has (OUT_DIR/machine.md), the Python with torch
#   1 programs      the kit's programs when they fit this machine (its torch version, these
#                   sources, every library found), else built here (the trainer first)
#   2 parity        the loss's CUDA kernels = the CPU's ATen composite (train_loss_kernels_test);
#                   one rank on cuda:0 with the NCCL backend = the CPU (tests/gpu/cpu_parity.sh)
#   3 default_job   the embedded default on the GPU, train.precision auto: >= 99% exact match
#   4 base_speed    paper-base bf16, 25 600 and 65 536 target tokens per step, beside the
#                   fast eager PyTorch peer: tokens/s, ratio, MFU, peak memory, the step with
#                   and without data loading (OUT_DIR/4-base_speed/gpu_benchmarks.md)
#   5 beam          beam 4 on the GPU = the CPU's hypotheses
#   6 exact_resume  exact resume in deterministic mode, bf16 and fp32, with preemption
#   7 profile       one profiled step of paper-base bf16: top kernels by GPU time, launches
#                   per step (OUT_DIR/7-profile.md); on the GPU it must see device kernels
#   8 shared_gpu    two ranks sharing the GPU over MPI = one rank with accumulation
#   9 extra         25 600 tokens per step in tf32 and bf16 beside the compiled peer
# On the GPU machine a stage that skips (no GPU visible, a build without
# CUDA or NCCL) counts as failed: a run that tested nothing must not pass.
# Exit 0 when every stage that ran passed, stages left for lack of time
# included; 1 otherwise.
#
# Environment: TORCH_PYTHON (a Python with torch built with CUDA; else
# .venv/torch, /opt/torch/.venv, python3, the first that has torch),
# GPU_KIT (default .gpu-kit; --kit), GPU_CHECK_BUDGET_S.
set -uo pipefail  # no -e: a failed stage must not stop the next
src=$(cd "$(dirname "$0")/.." && pwd)
dry=0 build=$src/build-gpu out='' stages=2,3,4,5,6,7,8,9 archive=''
kit=${GPU_KIT:-$src/.gpu-kit}
usage="usage: scripts/gpu_check.sh [--dry-run] [--kit DIR] [--build-dir DIR] [--stages 2,3,...] [--archive FILE] OUT_DIR"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1; shift ;;
    --kit) kit=${2:?--kit needs a folder}; shift 2 ;;
    --build-dir) build=${2:?--build-dir needs a folder}; shift 2 ;;
    --stages) stages=${2:?--stages needs a list such as 5,6,7}; shift 2 ;;
    --archive) archive=${2:?--archive needs a file}; shift 2 ;;
    -*) echo "gpu_check.sh: unknown option '$1'; $usage" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { echo "$usage" >&2; exit 2; }
[[ $stages =~ ^[2-9](,[2-9])*$ ]] || { echo "gpu_check.sh: --stages takes numbers 2-9 such as 5,6,7, not '$stages'" >&2; exit 2; }
mkdir -p "$out" "$build" && out=$(realpath "$out") build=$(realpath "$build") kit=$(realpath -m "$kit")
[ -z "$archive" ] || archive=$(mkdir -p "$(dirname "$archive")" && realpath -m "$archive")
budget=${GPU_CHECK_BUDGET_S:-420}
[[ $budget =~ ^[0-9]+$ ]] || { echo "gpu_check.sh: GPU_CHECK_BUDGET_S must be seconds, not '$budget'" >&2; exit 2; }
start=$SECONDS
device=cuda
((dry)) && device=cpu
# A CUDA toolkit where the machine keeps it but its PATH does not name it
# (a build there needs nvcc: LibTorch's CMake config).
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# Open MPI's shared-memory transport copies between ranks with CMA
# (process_vm_readv) by default, which a sandboxed machine may refuse.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

say() { echo "[gpu_check +$((SECONDS - start))s] $*" >&2; }

# ---- what the stages run (in a child bash each: exported) -------------------
# Stage 0: the machine's report, and what the next stages take from it
# ($out/env.sh: the Python with torch), each probe under a time limit.
machine() {
  local p python='' q='timeout 60'
  for p in "${TORCH_PYTHON:-}" "$src/.venv/torch/bin/python" /opt/torch/.venv/bin/python \
           "$(command -v python3)"; do
    if [ -n "$p" ] && [ -x "$p" ] && $q "$p" -c 'import torch' 2> /dev/null; then python=$p; break; fi
  done
  echo "python=${python@Q}" > "$out/env.sh"  # first: the probes below may outlast the stage
  first_line() { $q "$@" 2>&1 | head -1; }
  has_header() { echo "#include <$1>" | $q "${CXX:-c++}" -std=c++17 -x c++ -fsyntax-only - 2> /dev/null; }
  {
    echo "# The machine ($(date -u +%FT%TZ))"
    echo
    echo "| what | has |"
    echo "|---|---|"
    echo "| GPU | $($q nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2> /dev/null || echo "none visible (nvidia-smi)") |"
    echo "| cores, memory | $(nproc), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 2^20 }' /proc/meminfo) |"
    echo "| OS | $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME") |"
    echo "| C++ | $(first_line "${CXX:-c++}" --version) |"
    echo "| nvcc | $(command -v nvcc || echo none): $($q nvcc --version 2> /dev/null | grep -o 'release [0-9.]*' || echo -) |"
    echo "| CMake, Ninja | $(first_line cmake --version), $(first_line ninja --version || echo none) |"
    echo "| MPI | $(first_line mpirun --version) |"
    if [ -n "$python" ]; then
      echo "| torch | $($q "$python" -c 'import sys, torch
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
print(f"{torch.__version__} (CUDA {torch.version.cuda}, NCCL {nccl}, "
      f"GPUs visible {torch.cuda.device_count()}) of {sys.executable}")' 2>&1 | tail -1) |"
    else
      echo "| torch | NONE: no Python with torch (set TORCH_PYTHON) |"
    fi
    echo "| spdlog, toml++, HDF5 headers | $(for h in spdlog/spdlog.h toml++/toml.h hdf5.h; do
      has_header "$h" && printf '%s ' "$h" || printf 'no-%s ' "$h"; done) |"
    if [ -f "$kit/kit.env" ]; then
      echo "| kit | $(grep -v '^#' "$kit/kit.env" | tr '\n' ' ') |"
    else
      echo "| kit | none in $kit (scripts/gpu_kit.sh) |"
    fi
    echo "| PyTorch peer | $([ -f "$kit/peer/gpu_peer.py" ] && echo "$kit/peer" || echo "none ($kit/peer)") |"
  } > "$out/machine.md"
  cat "$out/machine.md"
  [ -n "$python" ] || { echo "no Python with torch here: set TORCH_PYTHON"; return 1; }
}

# Stage 1: the programs. The kit's when it was made from these sources against
# this torch and every library they load is found: torch's and its nvidia-*
# libraries by LD_LIBRARY_PATH, first, so that the CUDA runtime, NCCL and
# OpenMP runtime loaded are the ones torch's own libraries load (the kit's
# programs have no search path of their own: their build's DT_RPATH named
# this machine's folders and a CUDA toolkit's, CMakeLists.txt), then of the
# kit's lib/ only the sonames the machine lacks, then the machine's own path.
# Every later stage gets that path from env.sh. Else a build here, the
# trainer first.
# (a list in a string: an exported function cannot read an array)
programs="bin/trainer bin/evaluate bin/prepare_data bench/train_step_bench bench/loss_bench tests/train_loss_kernels_test"
kit_fits() {
  [ -f "$kit/kit.env" ] || { echo "no kit in $kit (scripts/gpu_kit.sh)"; return 1; }
  # shellcheck disable=SC2034  # KIT_LIBS: for people (machine.md)
  local KIT_TORCH KIT_SOURCE KIT_COMMIT KIT_LIBS torch source
  # shellcheck disable=SC1091  # written by scripts/gpu_kit.sh
  source "$kit/kit.env"
  torch=$("$python" -c 'import torch; print(torch.__version__)')
  source=$(bash "$src/scripts/source_hash.sh" "$src")
  [ "$torch" = "$KIT_TORCH" ] || { echo "the kit is built against torch $KIT_TORCH, this machine's is $torch"; return 1; }
  [ "$source" = "$KIT_SOURCE" ] || { echo "the kit is built from other sources (commit $KIT_COMMIT)"; return 1; }
}
use_kit() {
  local torch_lib libs p soname missing added path
  torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') || return 1
  libs=$torch_lib
  for p in "$(dirname "$(dirname "$torch_lib")")"/nvidia/*/lib; do [ -d "$p" ] && libs+=:$p; done
  path=$libs:$build/kit-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  rm -rf "${build:?}/bin" "$build/bench" "$build/kit-lib" "$build/CMakeCache.txt"
  mkdir -p "$build/kit-lib" && cp -r "$kit/build/." "$build/" || return 1
  echo "TEST_PYTHON:FILEPATH=$python" >> "$build/CMakeCache.txt"
  # The sonames not found, filled from the kit until none is missing (a
  # library taken from the kit may need another in turn).
  while :; do
    missing=$(for p in $programs; do LD_LIBRARY_PATH=$path ldd "$build/$p"; done |
      awk '$2 == "=>" && $3 == "not" { print $1 }' | sort -u)
    [ -n "$missing" ] || break
    added=0
    for soname in $missing; do
      [ -f "$kit/lib/$soname" ] || { echo "not on this machine nor in the kit: $soname"; return 1; }
      [ -e "$build/kit-lib/$soname" ] && continue
      ln -s "$kit/lib/$soname" "$build/kit-lib/$soname" && added=1
      echo "from the kit: $soname"
    done
    ((added)) || { echo "still not found, though in the kit: $missing"; return 1; }
  done
  # Every symbol bound at once (LD_BIND_NOW): a library of the machine's of
  # the soname the programs were linked against, but of another version,
  # shows here and not in the middle of a stage.
  for p in bin/trainer bin/evaluate bin/prepare_data; do
    LD_BIND_NOW=1 LD_LIBRARY_PATH=$path "$build/$p" --help > /dev/null || { echo "$p does not start"; return 1; }
  done
  echo "export LD_LIBRARY_PATH=${libs@Q}:${build@Q}/kit-lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" >> "$out/env.sh"
  echo "programs: the kit's (torch $("$python" -c 'import torch; print(torch.__version__)'), $(grep KIT_COMMIT "$kit/kit.env"))"
}
build_programs() {
  local generator=Ninja prefix prefixes='' name
  command -v ninja > /dev/null || generator="Unix Makefiles"
  if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then  # a failed configure leaves neither
    rm -f "$build/CMakeCache.txt"
    prefix=$(TORCH_PYTHON=$python bash "$src/scripts/torch_prefix.sh") || return 1
    for name in "$kit"/deps/*/usr; do [ -d "$name" ] && prefixes+=";$name"; done
    cmake -S "$src" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_PREFIX_PATH=$prefix$prefixes" "-DTEST_PYTHON=$python" || return 1
  fi
  cmake --build "$build" -j "$(nproc)" --target trainer || return 1
  # shellcheck disable=SC2046  # the programs' names
  cmake --build "$build" -j "$(nproc)" --target $(for p in $programs; do basename "$p"; done) || return 1
  echo "programs: built here ($(grep -E '^TRAINER_BUILT_(CUDA|NCCL)' "$build/CMakeCache.txt" | tr '\n' ' '))"
}
get_programs() {  # a build folder already configured is built (ninja: what changed), else the kit
  if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ] && kit_fits; then
    use_kit && return 0
    echo "the kit's programs cannot run here: building"
  fi
  build_programs
}
gpu() { bash "$src/tests/gpu/$1.sh" "$build" "$src"; }
# The loss kernels' test (a skip, without a GPU, is a skip of the stage), then training.
parity() {
  local log=$out/2-kernels.log rc
  "$build/tests/train_loss_kernels_test" --gtest_filter='LabelSmoothing.*' --gtest_brief=1 > "$log" 2>&1
  rc=$?
  cat "$log"
  ((rc == 0)) || return 1
  if grep -q '^\[  SKIPPED \]' "$log"; then echo "SKIP: no GPU visible (the loss kernels' test)"; return 77; fi
  gpu cpu_parity
}
# gpu_benchmarks.sh into OUT_DIR/<n>-<name>/ (settings as environment: TOKENS, PRECISIONS, ...)
benchmark() {  # <n>-<name> [VAR=value ...]
  local dir=$out/$1; shift
  env "$@" OUT="$dir" BUILD_DIR="$build" PYTHON="$python" PEER_DIR="$kit/peer" DRY_RUN="$dry" \
    bash "$src/tests/bench/gpu_benchmarks.sh"
}
# One profiled step (tests/bench/kernel_profile.h) and its table.
profile() {  # <size> <precision> <sentences>
  KERNEL_PROFILE="$out/7-profile.json" "$build/bench/train_step_bench" "$1" "$(nproc)" "$2" 4 "" \
    "$device" "$3" || return 1
  "$python" - "$out/7-profile.json" "$out/7-profile.md" "$device" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
lines = [f"One step: {p['device_events']} device events, {p['launches']} kernel launches from the host, "
         f"device busy {p['device_busy_ms']:.1f} ms of {p['wall_ms']:.1f} ms wall", "",
         f"| {p['what']} | calls | ms | share |", "|---|---|---|---|"]
lines += [f"| `{t['name'][:110]}` | {t['calls']} | {t['ms']:.3f} | {t['share']:.1%} |" for t in p["top"]]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
assert p["top"], "the profile is empty"
assert sys.argv[3] != "cuda" or p["what"] == "device kernels", "a step on the GPU, and no GPU kernel profiled"
PY
}
export -f machine kit_fits use_kit build_programs get_programs gpu parity benchmark profile
export src build out kit dry device programs

# ---- the stages -------------------------------------------------------------
results=$out/results.md
{
  echo "# GPU check$( ((dry)) && echo " (dry run: the CPU, tiny sizes)")"
  echo
  echo "commit $(git -C "$src" rev-parse --short HEAD 2> /dev/null || echo "?")$(
         [ -n "$(git -C "$src" status --porcelain --untracked-files=no 2> /dev/null)" ] && echo "+changes") ·" \
       "$(date -u +%FT%TZ) · budget ${budget} s · stages 0,1,$stages"
  echo
  echo "| # | stage | result | seconds | last words |"
  echo "|---|---|---|---|---|"
} > "$results"

row() {  # <n> <stage> <result> <seconds> <text>
  local text=${5//|/\\|}
  echo "| $1 | $2 | $3 | $4 | ${text:0:220} |" | tee -a "$results"
}
# OUT_DIR into the archive (written aside, then renamed: a call cut off while
# packing still returns the last whole one), results.md beside it.
pack() {
  [ -n "$archive" ] || return 0
  tar -czf "$archive.part" -C "$(dirname "$out")" "$(basename "$out")" && mv "$archive.part" "$archive"
  cp "$results" "$(dirname "$archive")/results.md"
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
# whatever it left running killed; then what it settled for the next stages
# (env.sh) read, and the archive packed. Exit 77 is a skip: a failure on the
# GPU machine, where nothing may skip.
stage() {
  local n=$1 name=$2 limit=$3; shift 3
  ((n < 2)) || [[ ",$stages," == *",$n,"* ]] || return 0
  local left=$((budget - (SECONDS - start))) log=$out/$n-$name.log
  if ((n >= 2 && limit > left)); then  # stages 0 and 1: the others need them
    row "$n" "$name" "not run" 0 "needs up to $limit s, $left left of the $budget s"
    pack
    return
  fi
  say "stage $n $name (at most $limit s)"
  local begin=$SECONDS rc result
  # bash -c: the command may be one of the functions above (exported)
  # shellcheck disable=SC2016  # expanded by that bash
  setsid timeout --kill-after=10 "$limit" bash -c '[ ! -f "$out/env.sh" ] || source "$out/env.sh"; "$@"' \
    stage "$@" > "$log" 2>&1 < /dev/null &
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
  pack
}
own_session=$(read -r f < /proc/$$/stat; f=${f##*) }; read -r _ _ _ s _ <<< "$f"; echo "$s")

stage 0 machine 90 machine
# The kit's programs take seconds, a build here ~4 minutes on 16 cores from
# scratch; the limit is the build's, since the kit may turn out not to fit.
stage 1 programs 300 get_programs
stage 2 parity 70 parity
stage 3 default_job 100 env GPU_PRECISIONS=auto bash "$src/tests/gpu/default_job_gpu.sh" "$build" "$src"
if ((dry)); then
  stage 4 base_speed 150 benchmark 4-base_speed TOKENS=480 PRECISIONS=fp32 STEPS=4 PEERS=fast
else
  stage 4 base_speed 150 benchmark 4-base_speed "TOKENS=25600 65536" PRECISIONS=bf16 STEPS=20 PEERS=fast
fi
stage 5 beam 80 gpu beam_gpu_vs_cpu
stage 6 exact_resume 180 env "GPU_PRECISIONS=bf16 fp32" bash "$src/tests/gpu/exact_resume_gpu.sh" "$build" "$src"
if ((dry)); then
  stage 7 profile 60 profile default fp32 40
else
  stage 7 profile 45 profile base bf16 800
fi
stage 8 shared_gpu 90 gpu shared_gpu_invariance
if ((dry)); then
  stage 9 extra 150 benchmark 9-extra TOKENS=960 PRECISIONS=fp32 STEPS=4 "PEERS=fast --compile"
else
  stage 9 extra 150 benchmark 9-extra TOKENS=25600 "PRECISIONS=tf32 bf16" STEPS=20 "PEERS=fast --compile"
fi
say "done in $((SECONDS - start)) s: $results"
cat "$results"
! grep -qE '\| (FAILED|TIMED OUT)' "$results"
