#!/usr/bin/env bash
# scripts/gpu_kit.sh and scripts/gpu_check.sh --dry-run on this build, so that
# a broken path, a missing file or a wrong option shows here and not in a
# lent GPU's minutes:
#   - the kit is made from this build as for a GPU machine: its programs
#     stripped and without a search path of their own, CMake finds each bundled
#     dependency in it, it stays within what travels;
#   - with the kit and an empty build folder, the programs are the kit's and
#     load with what gpu_check.sh gives them (LD_LIBRARY_PATH), no build tree,
#     a library only the kit has among them (prepare_data's spdlog, renamed);
#   - every stage runs and leaves its log; the GPU-only ones skip (no GPU
#     here), the others run on the CPU with tiny sizes and pass;
#   - the archive holds every stage's log, the machine's report, the
#     benchmark's table and the profile, and beside it only results.md;
#   - with a configured build folder (this build) the programs are built
#     there; --stages runs only those; with no time left in the budget,
#     stages 2-9 are reported as not run and the check still passes.
# Skips (77) on a build without CUDA: the kit is of the CUDA flavour.
# Usage: gpu_check_dry_run.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
if ! grep -q "^TRAINER_BUILT_CUDA:INTERNAL=ON" "$build/CMakeCache.txt"; then
  echo "SKIP: $build is not the CUDA flavour (scripts/build.sh --torch pypi builds it)"
  exit 77
fi
source "$src/tests/script_lib.bash"
enter_scratch gpu-check-dry

peer_note="no PyTorch peer"
[ -f "$src/../shared/peer/gpu_peer.py" ] && peer_note="the PyTorch reference"
bash "$src/scripts/gpu_kit.sh" --from-build "$build" --python "$python" --out kit \
  --peer "$src/../shared/peer" > kit.log 2>&1 || fail "scripts/gpu_kit.sh" kit.log
search_paths() { readelf -d "$1" | grep -cE '\((RPATH|RUNPATH)\)'; }  # grep -c reads it all
for p in bin/trainer bin/evaluate bin/prepare_data bench/train_step_bench bench/loss_bench; do
  [ -x "kit/build/$p" ] || fail "the kit has no $p" kit.log
  [ "$(search_paths "kit/build/$p")" = 0 ] || fail "kit/build/$p keeps a search path" kit.log
done
grep -q "^KIT_TORCH=$("$python" -c 'import torch; print(torch.__version__)')$" kit/kit.env ||
  fail "kit.env: KIT_TORCH is not the build's torch" kit/kit.env
[ -f kit/lib/libspdlog.so.1.10 ] || fail "the kit has no spdlog (Debian 12's soname)" kit.log
# A library only the kit has, as on a GPU machine without Debian's spdlog:
# prepare_data asks for it under a soname this machine lacks.
cp kit/lib/libspdlog.so.1.10 kit/lib/libspdlog-kit-only.so.1.10
patchelf --replace-needed libspdlog.so.1.10 libspdlog-kit-only.so.1.10 kit/build/bin/prepare_data
for name in tomlplusplus CLI11 nlohmann_json GTest; do
  [ -d "kit/deps/$name" ] || { echo "NOTE: kit/deps/$name missing (apt-get download offline?)"; continue; }
  mkdir -p "probe-$name"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(probe CXX)\nfind_package(%s CONFIG REQUIRED)\nmessage(STATUS "found: ${%s_DIR}")\n' \
    "$name" "$name" > "probe-$name/CMakeLists.txt"
  cmake -S "probe-$name" -B "probe-$name/build" -DCMAKE_PREFIX_PATH="$work/kit/deps/$name/usr" \
    > "probe-$name.log" 2>&1 || fail "CMake does not find the kit's $name" "probe-$name.log"
  grep -q "found: $work/kit/deps/$name/" "probe-$name.log" ||
    fail "CMake found $name elsewhere than in the kit" "probe-$name.log"
done

# The main path: the kit's programs in an empty build folder, the archive back.
TORCH_PYTHON=$python bash "$src/scripts/gpu_check.sh" --dry-run --kit kit --build-dir kit-build \
  --archive back/gpu-check.tar.gz out > check.log 2>&1 || fail "gpu_check.sh --dry-run: a stage failed" check.log
[ "$(search_paths kit-build/bin/trainer)" = 0 ] || fail "the trainer run is not the kit's" check.log
"$python" - "$work" "$peer_note" <<'PY'
import io, json, os, re, sys, tarfile
work, peer_note = sys.argv[1], sys.argv[2]
assert sorted(os.listdir(f"{work}/back")) == ["gpu-check.tar.gz", "results.md"], os.listdir(f"{work}/back")
with tarfile.open(f"{work}/back/gpu-check.tar.gz") as tar:
    files = {m.name: m for m in tar.getmembers() if m.isfile()}
    read = lambda name: tar.extractfile(files[f"out/{name}"]).read().decode()
    results = read("results.md")
    assert results == open(f"{work}/back/results.md").read(), "results.md beside the archive differs"
    rows = [l for l in results.splitlines() if re.match(r"\| \d+ \|", l)]
    stages = {int(r.split("|")[1]): (r.split("|")[2].strip(), r.split("|")[3].strip()) for r in rows}
    expected = {0: "machine", 1: "programs", 2: "parity", 3: "default_job", 4: "base_speed",
                5: "beam", 6: "exact_resume", 7: "profile", 8: "shared_gpu", 9: "extra"}
    assert {n: s for n, (s, _) in stages.items()} == expected, stages
    gpu_only = {2, 3, 5, 6, 8}
    for n, (name, result) in stages.items():
        want = "skipped" if n in gpu_only else "passed"
        assert result == want, f"stage {n} {name}: {result}, expected {want}"
        log = read(f"{n}-{name}.log")
        assert log, f"stage {n} left no log"
        if n in gpu_only:
            assert "SKIP: no GPU visible" in log, n
    programs = read("1-programs.log")
    assert "programs: the kit's" in programs, programs
    assert "from the kit: libspdlog-kit-only.so.1.10" in programs, programs
    assert "KIT_TORCH=" in read("machine.md"), read("machine.md")
    bench = [json.loads(l) for l in read("4-base_speed/rows.jsonl").splitlines()]
    impls = {r["impl"] for r in bench}
    assert {"trainer", "model step, no data loading"} <= impls, impls
    assert all(r["tokens_per_s"] > 0 for r in bench), bench
    assert "| 480 | fp32 | trainer |" in read("4-base_speed/gpu_benchmarks.md")
    if peer_note == "no PyTorch peer":
        assert "no PyTorch peer" in read("4-base_speed.log")
    profile = json.loads(read("7-profile.json"))
    assert profile["top"] and profile["top"][0]["ms"] > 0, profile
    assert "| cpu operators | calls |" in read("7-profile.md")
print(f"dry run: 10 stages, {len(gpu_only)} GPU-only skipped, all in the archive; trainer "
      f"{next(r['tokens_per_s'] for r in bench if r['impl'] == 'trainer'):.0f} tok/s")
PY

# A configured build folder (this one) is built, not replaced; --stages: only those.
TORCH_PYTHON=$python bash "$src/scripts/gpu_check.sh" --dry-run --kit kit --build-dir "$build" \
  --stages 7 out-7 > only7.log 2>&1 || fail "gpu_check.sh --stages 7" only7.log
grep -q "programs: built here" out-7/1-programs.log || fail "a configured build was not used" out-7/1-programs.log
[ "$(grep -cE '^\| [0-9] \|' out-7/results.md)" -eq 3 ] && grep -q '^| 7 | profile | passed |' out-7/results.md ||
  fail "--stages 7 ran other stages, or not the profile" out-7/results.md

# No time left: stages 0 and 1 run, every other is reported, none runs, and that passes.
GPU_CHECK_BUDGET_S=5 TORCH_PYTHON=$python bash "$src/scripts/gpu_check.sh" --dry-run --kit kit \
  --build-dir none-build out-none > none.log 2>&1 || fail "gpu_check.sh with no time left" none.log
test "$(grep -cE '\| not run \| 0 \| needs up to [0-9]+ s, -?[0-9]+ left of the 5 s \|' out-none/results.md)" -eq 8 ||
  fail "with no time left, not every stage says so" out-none/results.md
echo "gpu_kit.sh, gpu_check.sh --dry-run: OK"
