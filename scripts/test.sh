#!/usr/bin/env bash
# The whole test suite: installs, builds, runs every ctest label (unit, data,
# model, e2e, ...). Extra arguments go to ctest (e.g. -L unit, or
# -R train_checkpoints for one test).
#   scripts/test.sh --torch pypi [ctest args]   # the same on the GPU flavour (build-cuda/)
set -euo pipefail
cd "$(dirname "$0")/.."
torch=debian
if [ "${1:-}" = "--torch" ]; then
  torch=$2
  shift 2
fi
build=build
[ "$torch" = pypi ] && build=build-cuda
if [ -f "$build/build.ninja" ] && [ "$build/build.ninja" -nt scripts/setup.sh ] &&
   [ "$build/build.ninja" -nt scripts/setup_torch_pypi.sh ]; then
  # Configured since the setup scripts last changed: no package or configure
  # step; ninja rebuilds what changed (re-running CMake itself when a
  # CMakeLists.txt did), and when nothing did it is done in a fraction of a second.
  cmake --build "$build" -j "$(nproc)"
else
  bash scripts/build.sh --torch "$torch"  # packages (scripts/setup.sh), configure, build
fi
ctest --test-dir "$build" --output-on-failure --timeout 1500 "$@"
