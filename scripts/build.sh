#!/usr/bin/env bash
# Installs the Debian packages (once) and builds everything into build/.
#   BUILD_DIR=build-debug CMAKE_BUILD_TYPE=Debug scripts/build.sh   # other builds
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" >/dev/null
cmake --build "$build" -j "$(nproc)"
