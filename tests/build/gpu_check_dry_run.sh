#!/usr/bin/env bash
# scripts/gpu_check.sh --dry-run on this build, so that a broken path, a
# missing file or a wrong option shows here and not in a lent GPU's minutes:
#   - the bundle (scripts/gpu_bundle.sh) is made as for a GPU machine, and
#     CMake finds each of its dependencies in it;
#   - every stage runs and leaves its log; the GPU-only ones skip (no GPU
#     here), the others run on the CPU with tiny sizes and pass;
#   - the output folder holds the machine's report, the results table with a
#     row per stage, the benchmark's rows and table, the profile (JSON, table);
#   - --stages runs only those; with no time left in its budget, each stage
#     is reported as not run.
# Skips (77) on a build without CUDA: the script builds against a CUDA LibTorch.
# Usage: gpu_check_dry_run.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
if ! grep -q "^TRAINER_BUILT_CUDA:INTERNAL=ON" "$build/CMakeCache.txt"; then
  echo "SKIP: $build is not the CUDA flavour (scripts/build.sh --torch pypi builds it)"
  exit 77
fi
source "$src/tests/script_lib.bash"
enter_scratch gpu-check-dry

# The bundle, with the PyTorch reference where this machine has it. Offline
# (apt-get download fails) the rest runs without one and says so.
peer_note="no PyTorch peer"
[ -f "$src/../shared/peer/gpu_peer.py" ] && peer_note="the PyTorch reference"
bundled=(tomlplusplus CLI11 nlohmann_json GTest)
if ! bash "$src/scripts/gpu_bundle.sh" --out bundle --peer "$src/../shared/peer" > bundle.log 2>&1; then
  grep -q "apt-get download .* failed" bundle.log || fail "scripts/gpu_bundle.sh" bundle.log
  echo "NOTE: no bundle (apt-get download failed: offline?); its checks left out"
  bundled=() peer_note="no PyTorch peer"
  mkdir -p bundle
fi
for name in "${bundled[@]}"; do
  mkdir -p "probe-$name"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(probe CXX)\nfind_package(%s CONFIG REQUIRED)\nmessage(STATUS "found: ${%s_DIR}")\n' \
    "$name" "$name" > "probe-$name/CMakeLists.txt"
  cmake -S "probe-$name" -B "probe-$name/build" -DCMAKE_PREFIX_PATH="$work/bundle/deps/$name/usr" \
    > "probe-$name.log" 2>&1 || fail "CMake does not find the bundled $name" "probe-$name.log"
  grep -q "found: $work/bundle/deps/$name/" "probe-$name.log" ||
    fail "CMake found $name elsewhere than in the bundle" "probe-$name.log"
done

GPU_BUNDLE=$work/bundle bash "$src/scripts/gpu_check.sh" --dry-run --build-dir "$build" out \
  > check.log 2>&1 || fail "gpu_check.sh --dry-run: a stage failed" check.log
"$python" - "$work/out" "$peer_note" <<'PY'
import json, os, re, sys
out, peer_note = sys.argv[1], sys.argv[2]
rows = [l for l in open(f"{out}/results.md") if re.match(r"\| \d+ \|", l)]
stages = {int(r.split("|")[1]): (r.split("|")[2].strip(), r.split("|")[3].strip()) for r in rows}
expected = {1: "build", 2: "nccl_parity", 3: "default_job", 4: "base_speed", 5: "shared_gpu",
            6: "beam", 7: "exact_resume", 8: "profile", 9: "extra"}
assert {n: s for n, (s, _) in stages.items()} == expected, stages
gpu_only = {2, 3, 5, 6, 7}
for n, (name, result) in stages.items():
    want = "skipped" if n in gpu_only else "passed"
    assert result == want, f"stage {n} {name}: {result}, expected {want}"
    assert os.path.getsize(f"{out}/{n}-{name}.log") > 0, f"stage {n} left no log"
    if n in gpu_only:
        assert "SKIP: no GPU visible" in open(f"{out}/{n}-{name}.log").read(), n
machine = open(f"{out}/machine.md").read()
for name in ("tomlplusplus", "CLI11", "nlohmann_json", "GTest", "torch", "PyTorch peer"):
    assert f"| {name} |" in machine, f"machine.md says nothing of {name}"
bench = [json.loads(l) for l in open(f"{out}/4-base_speed/rows.jsonl")]
impls = {r["impl"] for r in bench}
assert {"trainer", "model step, no data loading"} <= impls, impls
assert all(r["tokens_per_s"] > 0 for r in bench), bench
table = open(f"{out}/4-base_speed/gpu_benchmarks.md").read()
assert "| 480 | fp32 | trainer |" in table, table
if peer_note == "no PyTorch peer":
    assert "no PyTorch peer" in open(f"{out}/4-base_speed.log").read()
profile = json.load(open(f"{out}/8-profile.json"))
assert profile["top"] and profile["top"][0]["ms"] > 0, profile
assert "| cpu operators | calls |" in open(f"{out}/8-profile.md").read()
print(f"dry run: 9 stages, {len(gpu_only)} GPU-only skipped; trainer "
      f"{next(r['tokens_per_s'] for r in bench if r['impl'] == 'trainer'):.0f} tok/s; "
      f"profile top: {profile['top'][0]['name']}")
PY

# --stages: only those, here the profile.
GPU_BUNDLE=$work/bundle bash "$src/scripts/gpu_check.sh" --dry-run --build-dir "$build" \
  --stages 8 out-8 > only8.log 2>&1 || fail "gpu_check.sh --stages 8" only8.log
[ "$(grep -cE '^\| [0-9] \|' out-8/results.md)" -eq 1 ] && grep -q '^| 8 | profile | passed |' out-8/results.md ||
  fail "--stages 8 ran other stages, or not the profile" out-8/results.md

# No time left: every stage is reported, none runs.
GPU_CHECK_BUDGET_S=10 GPU_BUNDLE=$work/bundle bash "$src/scripts/gpu_check.sh" --dry-run \
  --build-dir "$build" out-none > none.log 2>&1 || fail "gpu_check.sh with no time left" none.log
test "$(grep -c '| not run | 0 | no time left of the 10 s |' out-none/results.md)" -eq 9 ||
  fail "with no time left, not every stage says so" out-none/results.md
echo "gpu_check.sh --dry-run: OK"
