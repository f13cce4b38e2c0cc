#!/usr/bin/env bash
# Installs every Debian 12 package the project needs, or the packages named
# as arguments (scripts/setup.sh slurm-wlm munge). Idempotent: packages
# already present are skipped, so a second run costs one dpkg query, and with
# nothing missing it needs neither root nor apt.
#   scripts/setup.sh --torch pypi   # also the GPU flavour's LibTorch: the PyPI torch
#                                   # wheel (CUDA build, NCCL) in .venv/torch
# Where packages are missing and cannot be installed (no root and no sudo, or
# not a Debian system: a cluster's login node), it names them and stops (exit 1),
# unless they come from elsewhere (modules, conda, folders unpacked by hand):
# with CMAKE_PREFIX_PATH set, or SETUP_SKIP_APT=1, it says so and goes on, and
# CMake finds them there or names what it cannot find.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_source=debian
if [ "${1:-}" = "--torch" ]; then
  torch_source=${2:?"--torch needs debian or pypi"}
  shift 2
fi
case "$torch_source" in
  debian | pypi) ;;
  *) echo "setup.sh: --torch must be debian or pypi, not '$torch_source'" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-openmp          # LibTorch 1.13 (CPU) + optimized BLAS
  libopenmpi-dev openmpi-bin                # MPI launch and CPU allreduce
  libhdf5-dev hdf5-tools                    # dataset shards (h5dump for inspection)
  libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libsentencepiece-dev sentencepiece libssl-dev zlib1g-dev   # zlib: the split index's CRC-32
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-h5py python3-numpy  # interop and reference checks in tests
)
(($#)) && packages=("$@")

missing=()
if command -v dpkg-query > /dev/null; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
else
  missing=("${packages[@]}")  # not Debian: nothing to ask dpkg; see below
fi

# How apt can be run here: "" as root, "sudo" where sudo works (without a
# password, or with one typed at a terminal); no output where it cannot.
apt_runner() {
  command -v apt-get > /dev/null && command -v dpkg-query > /dev/null || return 1
  if [ "$(id -u)" -eq 0 ]; then echo ""; return 0; fi
  command -v sudo > /dev/null || return 1
  if sudo -n true 2> /dev/null; then echo sudo; return 0; fi
  if [ -t 0 ] && sudo -v; then echo sudo; return 0; fi
  return 1
}

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
elif runner=$(apt_runner); then
  echo "setup: installing ${missing[*]}"
  $runner apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $runner apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  if ! command -v dpkg-query > /dev/null; then
    why="this is not a Debian system (no dpkg-query), so these Debian packages cannot be checked or installed"
  elif ! command -v apt-get > /dev/null; then
    why="apt-get is not here to install them"
  else
    why="installing them needs root, and sudo is not available to $(id -un)"
  fi
  cat >&2 <<EOF
setup: missing Debian packages: ${missing[*]}
setup: $why.
  Either have them installed (as root: apt-get install ${missing[*]}),
  or bring them yourself and tell CMake where they are, without root:
    - your site's modules or a conda environment (a C++17 compiler, CMake >= 3.18, Ninja,
      MPI, HDF5, spdlog, fmt, CLI11, toml++, nlohmann-json, OpenSSL, SentencePiece,
      GoogleTest for the tests), then CMAKE_PREFIX_PATH=<their prefixes, ':'-separated>;
    - Debian packages unpacked into a folder of yours (apt-get download needs no root):
        apt-get download ${missing[*]}
        for f in *.deb; do dpkg -x "\$f" \$HOME/deps; done
      then CMAKE_PREFIX_PATH=\$HOME/deps/usr;
    - LibTorch from a Python torch: TORCH_PYTHON=/path/to/python scripts/build.sh --torch pypi,
      or a LibTorch zip on CMAKE_PREFIX_PATH.
  With CMAKE_PREFIX_PATH set (or SETUP_SKIP_APT=1) this script goes on without apt, e.g.
    CMAKE_PREFIX_PATH=\$HOME/deps/usr scripts/build.sh
EOF
  if [ -n "${CMAKE_PREFIX_PATH:-}" ] || [ "${SETUP_SKIP_APT:-0}" = 1 ]; then
    echo "setup: going on without apt${CMAKE_PREFIX_PATH:+ (CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH)}: CMake names anything it cannot find" >&2
  else
    exit 1
  fi
fi

if [ "$torch_source" = pypi ]; then bash scripts/setup_torch_pypi.sh; fi
