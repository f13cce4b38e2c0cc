#!/usr/bin/env bash
# Installs what the build needs (once) and builds everything.
#   scripts/build.sh                 # Debian's LibTorch 1.13 (CPU): build/
#   scripts/build.sh --torch pypi    # the PyPI torch wheel's LibTorch (CUDA, NCCL): build-cuda/
#   BUILD_DIR=build-debug CMAKE_BUILD_TYPE=Debug scripts/build.sh   # other builds
# A LibTorch of your own: cmake -DCMAKE_PREFIX_PATH=/path/to/libtorch [-DNCCL_INCLUDE_DIR=..
# -DNCCL_LIBRARY=..] (README, "GPUs").
set -euo pipefail
cd "$(dirname "$0")/.."
torch=debian
if [ "${1:-}" = "--torch" ]; then
  torch=${2:?"--torch needs debian or pypi"}
  shift 2
fi
bash scripts/setup.sh --torch "$torch"
cmake_args=()
case "$torch" in
  debian) build=${BUILD_DIR:-build} ;;
  pypi)
    build=${BUILD_DIR:-build-cuda}
    # The tests check results with that torch's Python too (the GPU machine's has no other).
    cmake_args+=("-DCMAKE_PREFIX_PATH=$(bash scripts/torch_prefix.sh)"
                 "-DTEST_PYTHON=$(bash scripts/torch_prefix.sh --python)") ;;
  *) echo "build.sh: --torch must be debian or pypi, not '$torch'" >&2; exit 2 ;;
esac
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
