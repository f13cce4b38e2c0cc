#!/usr/bin/env bash
# What a GPU machine without network may lack, into .gpu-bundle/ (ignored by
# git; a few MB), so that it travels with the checkout and scripts/gpu_check.sh
# finds it there. Run on a machine with Debian's or Ubuntu's apt and the
# PyTorch references (no root: apt-get download + dpkg -x):
#   scripts/gpu_bundle.sh [--out DIR] [--peer DIR]
#     --out   where (default .gpu-bundle; scripts/gpu_check.sh reads $GPU_BUNDLE, the same)
#     --peer  the PyTorch GPU reference trainer (default ../shared/peer; where
#             it is missing, the bundle has none and the benchmark runs no peer)
#
# .gpu-bundle/deps/<name>/usr: the Debian packages of each build dependency
# that a GPU image was seen without or may be (toml++, CLI11, nlohmann-json,
# GoogleTest: headers, CMake configs, the libraries they link), one prefix
# each, so that gpu_check.sh puts on CMake's path only those its machine
# lacks. The heavier ones (Open MPI, HDF5, spdlog, SentencePiece) must be on
# the machine: a library unpacked elsewhere than where it was built to live
# (Open MPI's plugins, its prefix) does not simply run from a folder.
# .gpu-bundle/peer: the PyTorch GPU reference trainer the benchmark runs
# beside the trainer. .gpu-bundle/MANIFEST: what is here, from where.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
peer=$src/../shared/peer bundle=$src/.gpu-bundle
while [ $# -gt 0 ]; do  # folders given relative to where the command runs
  case "$1" in
    --out) bundle=$(realpath -m "${2:?--out needs a folder}"); shift 2 ;;
    --peer) peer=$(realpath -m "${2:?--peer needs a folder}"); shift 2 ;;
    *) echo "gpu_bundle.sh: unknown argument '$1' (--out DIR, --peer DIR)" >&2; exit 2 ;;
  esac
done
declare -A PACKAGES=(
  [tomlplusplus]="libtomlplusplus-dev libtomlplusplus3"
  [CLI11]="libcli11-dev"
  [nlohmann_json]="nlohmann-json3-dev"
  [GTest]="libgtest-dev"
)
command -v apt-get > /dev/null || { echo "gpu_bundle.sh: needs apt-get (Debian, Ubuntu)" >&2; exit 2; }

rm -rf "$bundle.new"
mkdir -p "$bundle.new/deps" "$bundle.new/peer" "$bundle.new/debs"
{
  echo "# made by scripts/gpu_bundle.sh on $(hostname) at $(date -u +%FT%TZ)"
  echo "# $(. /etc/os-release && echo "$PRETTY_NAME")"
} > "$bundle.new/MANIFEST"
for name in "${!PACKAGES[@]}"; do
  # shellcheck disable=SC2086  # a list of package names
  (cd "$bundle.new/debs" && apt-get download -q ${PACKAGES[$name]} > /dev/null 2>&1) || {
    echo "gpu_bundle.sh: apt-get download ${PACKAGES[$name]} failed" >&2; exit 1; }
  for package in ${PACKAGES[$name]}; do
    dpkg -x "$bundle.new/debs/${package}"_*.deb "$bundle.new/deps/$name"
    echo "deps/$name: $(basename "$bundle.new/debs/${package}"_*.deb)" >> "$bundle.new/MANIFEST"
  done
  rm -rf "$bundle.new/deps/$name/usr/share/doc"
done
rm -rf "$bundle.new/debs"
if [ -f "$peer/gpu_peer.py" ] && [ -f "$peer/annotated_train.py" ]; then
  cp "$peer/gpu_peer.py" "$peer/annotated_train.py" "$bundle.new/peer/"
  echo "peer: gpu_peer.py annotated_train.py from $(realpath "$peer")" >> "$bundle.new/MANIFEST"
else
  echo "gpu_bundle.sh: no PyTorch reference in $peer (--peer): the bundle has none" >&2
  rmdir "$bundle.new/peer"
fi
rm -rf "$bundle" && mv "$bundle.new" "$bundle"
echo "$bundle: $(du -sh "$bundle" | cut -f1), $(grep -c '^deps/' "$bundle/MANIFEST") packages$(
  [ -d "$bundle/peer" ] && echo ", the PyTorch reference")"
