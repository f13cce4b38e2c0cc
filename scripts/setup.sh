#!/usr/bin/env bash
# Installs every Debian 12 package the project needs, or the packages named
# as arguments (scripts/setup.sh slurm-wlm munge). Idempotent: packages
# already present are skipped, so a second run costs one dpkg query.
#   scripts/setup.sh --torch pypi   # also the GPU flavour's LibTorch: the PyPI torch
#                                   # wheel (CUDA build, NCCL) in .venv/torch
set -euo pipefail
cd "$(dirname "$0")/.."

torch_source=debian
if [ "${1:-}" = "--torch" ]; then
  torch_source=${2:?"--torch needs debian or pypi"}
  shift 2
fi

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-openmp          # LibTorch 1.13 (CPU) + optimized BLAS
  libopenmpi-dev openmpi-bin                # MPI launch and CPU allreduce
  libhdf5-dev hdf5-tools                    # dataset shards (h5dump for inspection)
  libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-h5py python3-numpy  # interop and reference checks in tests
)
(($#)) && packages=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi

case "$torch_source" in
  debian) ;;
  pypi) bash scripts/setup_torch_pypi.sh ;;
  *) echo "setup.sh: --torch must be debian or pypi, not '$torch_source'" >&2; exit 2 ;;
esac
