#!/usr/bin/env bash
# The whole test suite: installs, builds, runs every ctest label
# (unit, data, model, e2e, ...). Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 1500 "$@"
