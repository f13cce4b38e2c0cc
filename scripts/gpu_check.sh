#!/usr/bin/env bash
# The GPU checks, for a person with one GPU, from a fresh clone:
#   scripts/gpu_check.sh                               # torch from .venv/torch (scripts/setup.sh --torch pypi)
#   TORCH_PYTHON=/opt/torch/.venv/bin/python scripts/gpu_check.sh   # the machine's own torch
# 1. builds with CUDA + NCCL from that torch (build-cuda/), 2. runs the ctest
# label gpu (training on cuda:0 = on the CPU, the embedded default on cuda:0,
# ranks sharing the GPU = one rank with accumulation, exact resume in
# deterministic mode, beam search on the GPU against the CPU) and prints a
# summary table. The tests check their results with that torch's Python. The
# other build dependencies are those of scripts/setup.sh (installed beforehand).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-cuda}
log=$build/gpu_check
begin=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$(bash scripts/torch_prefix.sh)" \
  -DTEST_PYTHON="$(bash scripts/torch_prefix.sh --python)" > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
grep -E "CUDA: ON|NCCL backend" "$build.configure.log"
cmake --build "$build" -j "$(nproc)" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }
build_s=$((SECONDS - begin))
mkdir -p "$log"
ctest --test-dir "$build" -L gpu --output-on-failure --timeout 1800 --output-junit "$PWD/$log/junit.xml" \
  > "$log/ctest.log" 2>&1 || true
python3 - "$log/junit.xml" "$build_s" <<'PY'
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
print("| check | result | seconds |\n|---|---|---|")
print(f"| build with CUDA + NCCL | passed | {sys.argv[2]} |")
failed = 0
for c in cases:
    status = c.get("status", "run")
    result = {"run": "passed", "fail": "FAILED", "notrun": "skipped"}.get(status, status)
    failed += result == "FAILED"
    print(f"| {c.get('name')} | {result} | {float(c.get('time', 0)):.0f} |")
sys.exit(1 if failed else 0)
PY
