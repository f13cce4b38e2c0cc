#!/usr/bin/env bash
# The GPU kit: what a lent GPU machine (no network, a torch of its own, a
# lease of minutes) needs to run scripts/gpu_check.sh without building,
# made here into .gpu-kit/ (ignored by git; it travels with the checkout when
# named in the run tool's `carry`, 64 MiB in all with the checkout):
#   scripts/gpu_kit.sh                        # torch $GPU_TORCH_VERSION (2.11.0: the GPU image's)
#   scripts/gpu_kit.sh --torch 2.11.0 --out .gpu-kit --peer ../shared/peer
#   scripts/gpu_kit.sh --from-build build-cuda --python .venv/torch/bin/python  # a build already made
#
# Without --from-build it installs that torch from PyPI into .venv/gpu-kit-<version>
# (PyPI's default wheel of that version: the one the GPU image has, 2.11.0+cu130;
# its CUDA major must be this machine's toolkit's, which CMake checks) and builds
# the checks' programs against it in build-gpu-kit-<version>/. --from-build
# takes a build made otherwise (scripts/build.sh --torch pypi) and brings its
# programs up to date.
#
# .gpu-kit/build     a build folder as the checks read one: bin/{trainer,
#                    evaluate,prepare_data}, bench/{train_step_bench,loss_bench},
#                    tests/train_loss_kernels_test (the loss kernels' test), CMakeCache.txt with what was built in (TRAINER_BUILT_*).
#                    Stripped, and with no search path of their own (DT_RPATH
#                    removed): gpu_check.sh gives them the machine's torch
#                    (torch/lib, site-packages/nvidia/*/lib) by LD_LIBRARY_PATH.
# .gpu-kit/lib       the other shared libraries they load (spdlog, fmt, HDF5,
#                    toml++, SentencePiece, ...), except glibc's, the C++
#                    runtime's and MPI's: gpu_check.sh puts on the path only
#                    those the machine lacks (by soname: Debian 12's spdlog is
#                    libspdlog.so.1.10, Ubuntu 24.04's .so.1.12).
# .gpu-kit/deps      headers and CMake configs of the build dependencies a GPU
#                    image was seen without (toml++, ...), for a build there when
#                    the programs cannot be used (another torch, another source).
# .gpu-kit/peer      the PyTorch GPU reference the benchmark runs beside the trainer.
# .gpu-kit/kit.env   KIT_TORCH (torch.__version__ built against), KIT_SOURCE (a
#                    hash of the sources the programs are built from), KIT_COMMIT.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
torch_version=${GPU_TORCH_VERSION:-2.11.0}
kit=$src/.gpu-kit peer=$src/../shared/peer from_build='' python=''
programs=(bin/trainer bin/evaluate bin/prepare_data bench/train_step_bench bench/loss_bench
          tests/train_loss_kernels_test)
usage="usage: scripts/gpu_kit.sh [--torch VERSION] [--out DIR] [--peer DIR] [--from-build DIR --python PYTHON]"
while [ $# -gt 0 ]; do  # folders given relative to where the command runs
  case "$1" in
    --torch) torch_version=${2:?--torch needs a version}; shift 2 ;;
    --out) kit=$(realpath -m "${2:?--out needs a folder}"); shift 2 ;;
    --peer) peer=$(realpath -m "${2:?--peer needs a folder}"); shift 2 ;;
    --from-build) from_build=$(realpath "${2:?--from-build needs a build folder}"); shift 2 ;;
    --python) python=$(realpath -s "${2:?--python needs a Python with torch}"); shift 2 ;;
    *) echo "gpu_kit.sh: unknown argument '$1'; $usage" >&2; exit 2 ;;
  esac
done
say() { echo "gpu_kit: $*" >&2; }
bash "$src/scripts/setup.sh" patchelf > /dev/null  # DT_RPATH removed below

# ---- the programs, built against that torch -----------------------------------
# The sources hashed before the build and again at the end: an edit made
# meanwhile would label the programs with sources they were not built from.
source_hash=$(bash "$src/scripts/source_hash.sh" "$src")
if [ -n "$from_build" ]; then
  [ -n "$python" ] || { echo "gpu_kit.sh: --from-build needs --python (the torch it was built against)" >&2; exit 2; }
  build=$from_build
else
  venv=$src/.venv/gpu-kit-$torch_version build=$src/build-gpu-kit-$torch_version
  python=$venv/bin/python
  if ! "$python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$torch_version')" 2> /dev/null; then
    say "torch $torch_version from PyPI into $venv"
    python3 -m venv "$venv"
    "$python" -m pip install -q "torch==$torch_version" numpy h5py
  fi
  if [ ! -f "$build/build.ninja" ]; then  # a configure that failed leaves no build.ninja: tried again
    mkdir -p "$build"
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_PREFIX_PATH=$(TORCH_PYTHON=$python bash "$src/scripts/torch_prefix.sh")" \
      "-DTEST_PYTHON=$python" > "$build/configure.log" 2>&1 ||
      { cat "$build/configure.log" >&2; exit 1; }
  fi
fi
say "building ${programs[*]##*/} in $build"  # with --from-build: what changed since, if anything
cmake --build "$build" -j "$(nproc)" --target "${programs[@]##*/}" > "$build/gpu-kit-build.log" 2>&1 ||
  { tail -30 "$build/gpu-kit-build.log" >&2; exit 1; }
for built in CUDA NCCL; do
  grep -q "^TRAINER_BUILT_$built:INTERNAL=ON" "$build/CMakeCache.txt" ||
    { echo "gpu_kit.sh: $build is built without $built (TRAINER_BUILT_$built)" >&2; exit 1; }
done
torch_full=$("$python" -c 'import torch; print(torch.__version__)')
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
site=$(dirname "$(dirname "$torch_lib")")

rm -rf "$kit.new"
mkdir -p "$kit.new/build/bin" "$kit.new/build/bench" "$kit.new/build/tests" "$kit.new/lib" "$kit.new/peer"
for p in "${programs[@]}"; do
  strip --strip-unneeded -o "$kit.new/build/$p" "$build/$p"
  patchelf --remove-rpath "$kit.new/build/$p"
done
grep -E "^(TRAINER_BUILT_(CUDA|NCCL)|CMAKE_BUILD_TYPE):" "$build/CMakeCache.txt" > "$kit.new/build/CMakeCache.txt"

# ---- the shared libraries they load, but torch's, CUDA's, the system's core ---
# Resolved here with the build's own search path (its DT_RPATH); each kept by
# its soname, so that the GPU machine can ask for just the sonames it lacks.
skip='^(ld-linux.*|linux-vdso.*|lib(c|m|dl|rt|pthread|util|resolv|stdc\+\+|gcc_s)\.so.*|libmpi.*|libopen-(rte|pal).*|libhwloc.*|libevent.*|libpmix.*|libucp.*|libucs.*|libuct.*|libucm.*|libfabric.*|libpsm.*|libibverbs.*|librdmacm.*|libnl-.*|libnuma.*|libcuda\.so.*)$'
for p in "${programs[@]}"; do ldd "$build/$p"; done > "$kit.new/ldd.txt"
if grep "not found" "$kit.new/ldd.txt" >&2; then
  echo "gpu_kit.sh: the programs of $build do not load here (above)" >&2
  exit 1
fi
awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' "$kit.new/ldd.txt" | sort -u |
  while read -r soname path; do
    [[ $path == "$site"/* || $path == /usr/local/cuda* ]] && continue  # torch's and CUDA's own
    [[ $soname =~ $skip ]] && continue
    cp -L "$path" "$kit.new/lib/$soname"
  done
strip --strip-unneeded "$kit.new/lib/"*.so* 2> /dev/null || true
rm "$kit.new/ldd.txt"

# ---- headers for a build on the GPU machine, when the programs cannot serve ---
declare -A PACKAGES=([tomlplusplus]="libtomlplusplus-dev libtomlplusplus3" [CLI11]="libcli11-dev"
                     [nlohmann_json]="nlohmann-json3-dev" [GTest]="libgtest-dev")
mkdir -p "$kit.new/debs"
for name in "${!PACKAGES[@]}"; do
  # shellcheck disable=SC2086  # a list of package names
  (cd "$kit.new/debs" && apt-get download -q ${PACKAGES[$name]} > /dev/null 2>&1) ||
    { say "apt-get download ${PACKAGES[$name]} failed (offline?): the kit has no deps/$name"; continue; }
  mkdir -p "$kit.new/deps/$name"
  for package in ${PACKAGES[$name]}; do dpkg -x "$kit.new/debs/${package}"_*.deb "$kit.new/deps/$name"; done
  rm -rf "$kit.new/deps/$name/usr/share/doc" "$kit.new/deps/$name/usr/src"
done
rm -rf "$kit.new/debs"

if [ -f "$peer/gpu_peer.py" ] && [ -f "$peer/annotated_train.py" ]; then
  cp "$peer/gpu_peer.py" "$peer/annotated_train.py" "$kit.new/peer/"
else
  say "no PyTorch reference in $peer (--peer): the kit has none"
  rmdir "$kit.new/peer"
fi
{
  echo "# made by scripts/gpu_kit.sh on $(hostname), $(. /etc/os-release && echo "$PRETTY_NAME"), $(date -u +%FT%TZ)"
  echo "KIT_TORCH=$torch_full"
  echo "KIT_SOURCE=$source_hash"
  echo "KIT_COMMIT=$(git -C "$src" rev-parse --short HEAD 2> /dev/null || echo unknown)$(
    [ -n "$(git -C "$src" status --porcelain --untracked-files=no 2> /dev/null)" ] && echo +changes)"
  echo "KIT_LIBS='$(cd "$kit.new/lib" && echo *)'"
} > "$kit.new/kit.env"
if [ "$(bash "$src/scripts/source_hash.sh" "$src")" != "$source_hash" ]; then
  echo "gpu_kit.sh: the sources changed while the kit was made: make it again" >&2
  exit 1
fi
rm -rf "$kit" && mv "$kit.new" "$kit"
size=$(du -sm "$kit" | cut -f1)
say "$kit: ${size} MiB; programs against torch $torch_full; libraries: $(cd "$kit/lib" && echo *)"
if ((size > 48)); then
  echo "gpu_kit.sh: the kit is $size MiB: with the checkout it must stay under the 64 MiB that travel" >&2
  exit 1
fi
