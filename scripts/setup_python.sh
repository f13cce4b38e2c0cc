#!/usr/bin/env bash
# Makes the venv of the project's Python tools, .venv/tools in the checkout,
# with the pinned packages of scripts/python_tools.txt (sacreBLEU, matplotlib,
# tensorboard), and prints its python. Idempotent: when the venv was made
# from the same list it only prints the path. Uses the python3 on PATH, not
# Debian's /usr/bin/python3 (whose torch and h5py the other tests use).
#   py=$(scripts/setup_python.sh) && "$py" scripts/plot_run.py runs/default -o default.png
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv/tools
requirements=$root/scripts/python_tools.txt
stamp=$venv/requirements.txt  # the list the venv was made from

mkdir -p "$root/.venv"
exec 9> "$root/.venv/tools.lock"  # tests running side by side install once
flock 9 || echo "setup_python: no lock on $root/.venv/tools.lock (flock failed on this file system)" >&2

if ! cmp -s "$requirements" "$stamp" 2>/dev/null || [ ! -x "$venv/bin/python" ]; then
  echo "setup_python: installing $(grep -v '^#' "$requirements" | xargs) into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$venv/bin/python"
