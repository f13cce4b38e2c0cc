#!/usr/bin/env bash
# The exporters' Python (scripts/export_model.py, tests/export/): the PyPI
# torch's venv, .venv/torch (scripts/setup_torch_pypi.sh), with the pinned
# packages of scripts/python_export.txt (transformers, ctranslate2,
# sentencepiece) added; prints its python. Idempotent: when the venv already
# holds that list it only prints the path. Tests running side by side install
# once: pip runs under setup_torch_pypi.sh's lock, .venv/torch.lock.
#   py=$(scripts/setup_export.sh) && "$py" scripts/export_model.py --run runs/base --format ct2 --out ct2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv/torch
requirements=$root/scripts/python_export.txt
stamp=$venv/export-requirements.txt  # the list installed last

bash "$root/scripts/setup_torch_pypi.sh" >&2  # takes the lock and lets it go
exec 8> "$root/.venv/torch.lock"
flock 8 || echo "setup_export: no lock on $root/.venv/torch.lock (flock failed on this file system)" >&2
if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
  echo "setup_export: installing $(grep -v '^#' "$requirements" | xargs) into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$venv/bin/python"
