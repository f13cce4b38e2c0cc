#!/usr/bin/env bash
# The GPU flavour's LibTorch: the PyPI torch wheel (a CUDA build, with its own
# CUDA runtime, cuBLAS, cuDNN and NCCL as nvidia-* wheels) in a virtual
# environment inside the project, .venv/torch, with numpy and h5py: the tests
# of that build check their results with this Python (TEST_PYTHON). Idempotent:
# a second run checks the installed version against the pin and returns; two
# runs at once (builds or tests side by side) install once, the second waits.
# Prints one line; the build finds the wheel through scripts/torch_prefix.sh
# (CMAKE_PREFIX_PATH; CMake takes NCCL and the CUDA runtime from beside it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The range this project is built and tested against (torch 2.9 introduced the
# precision API used for TF32; the upper bound is the newest release checked).
pin='torch>=2.9,<2.16'
venv=.venv/torch

if [ -n "${TORCH_PYTHON:-}" ]; then  # a torch of your own (scripts/torch_prefix.sh)
  "$TORCH_PYTHON" -c 'import sys, torch; print(f"setup: torch {torch.__version__} (CUDA {torch.version.cuda}) of {sys.executable}")'
  exit 0
fi

# One pip in the venv at a time (here and in setup_export.sh): flock(2) on
# .venv/torch.lock, across nodes where the checkout's file system carries it
# (local disks, NFSv4, Lustre mounted with -o flock); where it fails, setup
# goes on unlocked and says so.
mkdir -p .venv
exec 8> .venv/torch.lock
flock 8 || echo "setup: no lock on .venv/torch.lock (flock failed on this file system): run one setup at a time" >&2
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" - "$pin" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
from packaging.requirements import Requirement
import h5py  # the tests' reference checks use this venv too (TEST_PYTHON)
sys.exit(0 if Requirement(sys.argv[1]).specifier.contains(version("torch")) else 1)
PY
  "$venv/bin/python" -m pip install -q --upgrade pip packaging
  "$venv/bin/python" -m pip install -q "$pin" numpy h5py
fi
"$venv/bin/python" -c 'import torch; print(f"setup: PyPI torch {torch.__version__} (CUDA {torch.version.cuda}) in .venv/torch")'
