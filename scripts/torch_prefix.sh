#!/usr/bin/env bash
# The LibTorch of a Python torch, for CMAKE_PREFIX_PATH: the torch package
# directory (it holds lib/, include/ and share/cmake/Torch). Python: $TORCH_PYTHON,
# else the project's .venv/torch (scripts/setup.sh --torch pypi).
#   scripts/torch_prefix.sh            # the prefix
#   scripts/torch_prefix.sh --python   # that Python itself (the build's TEST_PYTHON)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${TORCH_PYTHON:-.venv/torch/bin/python}
if [ "${1:-}" = --python ]; then
  "$python" -c 'import sys; print(sys.executable)'
else
  "$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))'
fi
