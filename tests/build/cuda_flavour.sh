#!/usr/bin/env bash
# The GPU flavour's build (scripts/build.sh --torch pypi), checked without a GPU:
#   - CMake found CUDA and NCCL; the trainer links libnccl and contains the
#     NCCL communicator; asking for NCCL on a CPU is a clear error;
#   - one copy of the CUDA runtime and of NCCL: the trainer resolves
#     libcudart and libnccl to the very files LibTorch's libtorch_cuda does
#     (of any version: not libcudart.so.13 beside LibTorch's .so.12), also
#     when LD_LIBRARY_PATH names a CUDA toolkit's libraries;
#   - no translation unit that sees LibTorch includes spdlog or an fmt header
#     (LibTorch ships its own fmt; only base/logging.cpp, torch-free, uses spdlog);
#   - the programs take the C++ runtime's functions from libstdc++, not from
#     the copies LibTorch exports (torch 2.11's libtorch.so: std::filesystem
#     functions that crash; pytorch/pytorch#133437);
#   - bringing your own NCCL (-DNCCL_INCLUDE_DIR/-DNCCL_LIBRARY) is honoured.
# Skips (77) on a build without CUDA.
# Usage: cuda_flavour.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
if ! grep -q "^TRAINER_BUILT_NCCL:INTERNAL=ON" "$build/CMakeCache.txt" || ! grep -q "libtorch_cuda" \
    <<<"$(ldd "$build/bin/trainer")"; then
  echo "SKIP: $build is not the CUDA flavour (scripts/build.sh --torch pypi builds it)"
  exit 77
fi
fail() { echo "FAIL: $1"; exit 1; }

# (grep reads whole outputs: `cmd | grep -q` can fail under pipefail when grep exits early)
grep -q "distributed::NcclCommunicator::iallreduce_sum" <<<"$(nm -C "$build/bin/trainer")" ||
  fail "the trainer does not contain the NCCL communicator"

torch_cuda=$(ldd "$build/bin/trainer" | awk '$1 ~ /^libtorch_cuda.so/ {print $3}')
# Every library that both the trainer and libtorch_cuda load is the same file
# (the CUDA runtime, NVRTC, NCCL, ...), also with a CUDA toolkit first in
# LD_LIBRARY_PATH, as a cluster's CUDA module sets it.
toolkit_lib=$(dirname "$(ls /usr/local/cuda/lib64/libcudart.so.* 2> /dev/null | head -1)")
for path in "${LD_LIBRARY_PATH:-}" "$toolkit_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; do
  ours=$(LD_LIBRARY_PATH=$path ldd "$build/bin/trainer")
  theirs=$(LD_LIBRARY_PATH=$path ldd "$torch_cuda")
  for lib in libcudart.so libnccl.so; do
    grep -q "^\s*$lib" <<<"$ours" || fail "the trainer does not link $lib"
  done
  python3 - "$path" <(echo "$ours") <(echo "$theirs") <<'PY' || exit 1
import collections, os, sys
def files(ldd):  # library (the name before ".so") -> the files loaded for it
    by_library = collections.defaultdict(set)
    for f in (l.split() for l in open(ldd)):
        if len(f) >= 3 and f[1] == "=>":
            by_library[f[0].split(".so")[0]].add(os.path.realpath(f[2]))
    return by_library
path, ours, theirs = sys.argv[1], files(sys.argv[2]), files(sys.argv[3])
both = sorted(set(ours) & set(theirs))
bad = [lib for lib in both if ours[lib] != theirs[lib]]
for lib in bad:
    print(f"FAIL: two copies of {lib} (LD_LIBRARY_PATH={path}): the trainer loads "
          f"{sorted(ours[lib])}, LibTorch {sorted(theirs[lib])}")
print(f"one copy of each of the {len(both)} libraries both load (LD_LIBRARY_PATH={path}), "
      f"e.g. {sorted(ours['libcudart'])}")
sys.exit(1 if bad or not both else 0)
PY
done

# Every translation unit compiled with LibTorch's include path, and the headers
# it read: none may be spdlog's or the system's fmt (LibTorch's own fmt is its business).
ninja -C "$build" -t deps > "$build/deps.txt"
python3 - "$build" <<'PY' || fail "translation units with LibTorch and spdlog/fmt (listed above)"
import json, re, sys
build = sys.argv[1]
torch_units = {e["output"] if "output" in e else re.search(r"-o (\S+)", e["command"]).group(1)
               for e in json.load(open(f"{build}/compile_commands.json"))
               if "torch/csrc/api/include" in e.get("command", " ".join(e.get("arguments", [])))}
bad, unit = set(), None
for line in open(f"{build}/deps.txt"):
    if not line.startswith(" "):
        unit = line.split(":")[0]
        if "project_pch.dir" in unit:  # the torch targets' precompiled header
            torch_units.add(unit)
    elif unit in torch_units and ("/spdlog/" in line or "/usr/include/fmt/" in line):
        bad.add(unit)
print(f"{len(torch_units)} translation units see LibTorch")
for u in sorted(bad):
    print("  with spdlog/fmt:", u)
sys.exit(1 if bad or not torch_units else 0)
PY
echo "no translation unit with LibTorch includes spdlog or fmt"

work=$(mktemp -d /tmp/cuda-flavour.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Every symbol that libstdc++ defines, the programs bind to libstdc++ (or to
# their own copy), read from the dynamic linker's own account at start-up.
libstdcxx=$(ldd "$build/bin/trainer" | awk '$1 ~ /^libstdc\+\+/ {print $3}')
for program in trainer evaluate; do
  LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/bindings" "$build/bin/$program" --help > /dev/null
  python3 - "$build/bin/$program" "$libstdcxx" <(nm -D --defined-only "$libstdcxx") \
      "$work"/bindings.* <<'PY' || fail "$program takes C++ runtime functions from elsewhere (above)"
import os, re, sys
program, libstdcxx, defined, logs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ours = {l.split()[-1].split("@")[0] for l in open(defined)}
binding = re.compile(r"binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([^']+)'")
bound = [m.groups()[1:] for log in logs for m in map(binding.search, open(log))
         if m and m[1] == program and m[3] in ours]
wrong = sorted({(os.path.basename(to), symbol) for to, symbol in bound
                if os.path.realpath(to) not in (os.path.realpath(libstdcxx), os.path.realpath(program))})
for to, symbol in wrong[:20]:
    print(f"  {symbol} from {to}")
print(f"{os.path.basename(program)}: {len(bound) - len(wrong)} of {len(bound)} bindings of "
      f"libstdc++'s symbols go to libstdc++ or the program itself")
sys.exit(1 if wrong or not bound else 0)
PY
  rm -f "$work"/bindings.*
done

"$build/bin/prepare_data" --task copy --out "$work/data" --train-size 20 --valid-size 0 \
  --test-size 0 >/dev/null
if "$build/bin/trainer" --data.dir "$work/data" --run.out_dir "$work/runs" --dist.backend nccl \
    > "$work/log" 2>&1; then
  fail "trainer accepted dist.backend = nccl on a CPU"
fi
grep -q "dist.backend = nccl needs a CUDA device" "$work/log" || { cat "$work/log"; exit 1; }

# Your own NCCL: the hints win (configure only).
if [ -f /usr/local/cuda/include/nccl.h ]; then
  own_nccl=$(ls /usr/local/cuda/lib64/libnccl.so* | head -1)
  cmake -S "$src" -B "$work/own" -G Ninja -DCMAKE_PREFIX_PATH="$(grep '^CMAKE_PREFIX_PATH:' "$build/CMakeCache.txt" | cut -d= -f2)" \
    -DNCCL_INCLUDE_DIR=/usr/local/cuda/include -DNCCL_LIBRARY="$own_nccl" -DBUILD_TESTING=OFF \
    > "$work/own.log" 2>&1 || { tail -20 "$work/own.log"; fail "configure with your own NCCL"; }
  grep -q "NCCL backend: ON ($own_nccl)" "$work/own.log" || { grep NCCL "$work/own.log"; fail "NCCL_LIBRARY not honoured"; }
  echo "your own NCCL: honoured ($own_nccl)"
fi
echo "CUDA flavour build: OK"
