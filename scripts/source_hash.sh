#!/usr/bin/env bash
# One hash of the files the programs are built from (C++ and CUDA sources and
# headers, CMake files; the unit tests, one of which the kit carries), so that programs made elsewhere (scripts/gpu_kit.sh) are used
# only with the sources they were built from (scripts/gpu_check.sh). Reads
# the files, not git: a copy of a checkout without .git hashes the same.
#   scripts/source_hash.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
find CMakeLists.txt cmake base launch settings data_pipeline trainer tests/bench tests/unit tests/CMakeLists.txt \
  -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.in' -o -name '*.cmake' \
  -o -name CMakeLists.txt \) \
  -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
