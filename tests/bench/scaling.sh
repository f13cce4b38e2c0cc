#!/usr/bin/env bash
# Data-parallel scaling on one machine, all figures from this one run:
#   - target tokens/s for 1 rank x 1 thread, 1 rank x 2 threads and 2 ranks x
#     1 thread on the same global batch; scaling efficiency of 2 ranks;
#   - the share of step time spent waiting on communication, with the
#     gradient allreduce overlapped with backward and without;
#   - allreduce bandwidth of the MPI backend vs a bare MPI_Allreduce.
#
#   tests/bench/scaling.sh [size]        (size: default | small | base; default base)
#   STEPS=12 BUILD_DIR=build
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
steps=${STEPS:-12}
size=${1:-base}
work=$(mktemp -d /tmp/bench-scaling.XXXXXX)
trap 'rm -rf "$work"' EXIT
source "$src/tests/bench/bench_lib.sh"

declare -A TOKS
echo "## Data-parallel scaling, size $size ($steps steps, median of timed windows)"
echo
echo "| ranks x threads | overlap | tokens/s | data | compute | comm wait | update |"
echo "|---|---|---|---|---|---|---|"
for run in "1 1 true" "1 2 true" "2 1 true" "2 1 false"; do
  read -r ranks threads overlap <<<"$run"
  run_trainer "$size" "$ranks" "$threads" --dist.overlap "$overlap"
  toks=$(metric "r['tokens_per_s']")
  TOKS["${ranks}x${threads}-$overlap"]=$toks
  share() { printf '%.1f%%' "$(metric "100 * r['time_share']['$1']")"; }
  printf '| %sx%s | %s | %.0f | %s | %s | %s | %s |\n' "$ranks" "$threads" "$overlap" "$toks" \
    "$(share data)" "$(share compute)" "$(share comm_wait)" "$(share update)"
done
/usr/bin/python3 - "${TOKS[1x1-true]}" "${TOKS[1x2-true]}" "${TOKS[2x1-true]}" <<'PY'
import sys
one, threads, ranks = map(float, sys.argv[1:])
print(f"\n2 ranks x 1 thread vs 1 x 1: {ranks / one:.2f}x (scaling efficiency {ranks / one / 2:.0%});"
      f" 1 rank x 2 threads vs 1 x 1: {threads / one:.2f}x")
PY
echo
bash "$src/scripts/mpirun.sh" -np 2 --bind-to core "$build/bench/allreduce_bench"
