#!/usr/bin/env bash
# The data side, all figures from this one run on a generated corpus of
# PAIRS sentence pairs (default 1,000,000; PAIRS=10000000 for the 10 M figure):
#   - prepare throughput (lines/s, tokens/s) of prepare_data with a given
#     SentencePiece model, 1 and 2 ranks, against Debian's spm_encode on the
#     same text, as a ratio; peak memory of each;
#   - reader + batcher throughput (build/bench/data_loader_bench) against what
#     the trainer consumes on the paper-base model (TRAINER_TOKS, default the
#     2 x 1 figure measured by tests/bench/benchmarks.sh here);
#   - the cost of the shards' checksums: the same throughput on the same
#     examples rewritten in shard format 1, without them
#     (tests/data/write_v1_shards.py). The shards are in the page cache, so
#     this is the CPU cost of reading and verifying chunks, not the disk's.
#
#   tests/bench/data_bench.sh        (BUILD_DIR=build PAIRS=... TRAINER_TOKS=...)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
pairs=${PAIRS:-1000000}
trainer_toks=${TRAINER_TOKS:-280}
work=$(mktemp -d /tmp/bench-data.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

/usr/bin/python3 - "$pairs" <<'PY'
import random, sys
n = int(sys.argv[1]); random.seed(1)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(2, 9)))
         for _ in range(20000)]
with open("train.src", "w") as s, open("train.tgt", "w") as t:
    for _ in range(n):
        s.write(" ".join(random.choices(words, k=random.randint(5, 30))) + "\n")
        t.write(" ".join(random.choices(words, k=random.randint(5, 30))) + "\n")
PY
head -100000 train.src > sample.txt; head -100000 train.tgt >> sample.txt
spm_train --input=sample.txt --model_prefix=m --vocab_size=8000 --pad_id=0 --bos_id=1 --eos_id=2 \
  --unk_id=3 --pad_piece='<pad>' --minloglevel=2 > /dev/null 2>&1

# seconds and peak RSS (MiB, the largest process) of a command
measure() {
  /usr/bin/python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.time()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{time.time() - start:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}
lines=$((2 * pairs))
tokens=$(cat train.src train.tgt | spm_encode --model m.model --output_format=id | wc -w)
read -r spm_s spm_mb < <(measure bash -c "spm_encode --model m.model --output_format=id < train.src > /dev/null && spm_encode --model m.model --output_format=id < train.tgt > /dev/null")
read -r p1_s p1_mb < <(measure "$build/bin/prepare_data" --task text --out d1 --vocab spm --spm-model m.model \
  --train-src train.src --train-tgt train.tgt --clean-max-words 0 --clean-ratio 0)
read -r p2_s p2_mb < <(measure bash "$src/scripts/mpirun.sh" -np 2 "$build/bin/prepare_data" --task text --out d2 \
  --vocab spm --spm-model m.model --train-src train.src --train-tgt train.tgt --clean-max-words 0 --clean-ratio 0)

echo "## Data pipeline, $pairs pairs ($lines lines, $tokens SentencePiece tokens)"
echo
echo "| encoder | seconds | lines/s | tokens/s | vs spm_encode | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
row() { /usr/bin/python3 -c "
s, name, mb = $2, '$1', '$3'
print(f'| {name} | {s:.1f} | {$lines / s:.0f} | {$tokens / s:.0f} | {$spm_s / s:.2f}x | {mb} |')"; }
row "spm_encode (Debian), 1 process" "$spm_s" "$spm_mb"
row "prepare_data, 1 rank (encode + clean + HDF5 shards)" "$p1_s" "$p1_mb"
row "prepare_data, 2 ranks" "$p2_s" "$p2_mb"
echo
"$build/bench/data_loader_bench" d1 4096 10 | tee loader.txt
/usr/bin/python3 - "$trainer_toks" <<'PY'
import re, sys
rate = max(float(l.split("|")[3]) for l in open("loader.txt") if l.startswith("| synchronous") or l.startswith("| prefetched"))
print(f"\nreader + batcher: {rate:.0f} target tokens/s = {rate / float(sys.argv[1]):.0f}x what the trainer "
      f"consumes on paper-base ({sys.argv[1]} tokens/s)")
PY

cp -r d1 d1-v1
/usr/bin/python3 "$src/tests/data/write_v1_shards.py" d1-v1
"$build/bin/prepare_data" --upgrade d1-v1 > /dev/null  # such shards predate split indexes
echo
"$build/bench/data_loader_bench" d1-v1 4096 10 | tee loader-v1.txt
/usr/bin/python3 - <<'PY'
def rates(path):
    return {l.split("|")[1].strip(): float(l.split("|")[3]) for l in open(path)
            if l.startswith("| ") and not l.startswith("| loader")}
v2, v1 = rates("loader.txt"), rates("loader-v1.txt")
print("\n### Checksums: target tokens/s, shard format 2 (Fletcher-32 on every chunk) vs 1 (none)\n")
print("| loader | format 2 | format 1 | format 2 / format 1 |")
print("|---|---|---|---|")
for name in v2:
    print(f"| {name} | {v2[name]:.0f} | {v1[name]:.0f} | {v2[name] / v1[name]:.3f} |")
PY
