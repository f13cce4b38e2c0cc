#!/usr/bin/env bash
# The file-system traffic of a trainer's start-up and resume, per rank, for
# many ranks on a shared file system (issue 57: a thousand ranks that each
# read every file are a metadata storm). One copy-task dataset of SHARDS
# training shards of 50 examples (default 2000); for each rank count R
# (default 2 4 8 16): the tiny model (TINY of tests/script_lib.bash) on 2
# simulated nodes x R/2 ranks (tests/multinode/nodes.bash: root and
# namespaces, the nodes sharing this machine's cores), trained 2 steps and
# saved, then resumed from that checkpoint for 2 more steps (and saved at the
# end, as every run is); no validation.
# Each rank's process LD_PRELOADs tests/bench/io_counter.c, which counts the
# regular files it opens and the bytes it reads from them, split into the
# dataset directory's files and the checkpoint's (the run's checkpoints at
# start-up: the save's read-back; at resume the checkpoint resumed from only).
# A process's figures are its whole life: the set-up, then the 2 steps' batches
# (a prefetch thread: the counter tells its opens from the main thread's).
# Printed: a markdown table per phase, a row per rank count:
#   - dataset opens, total over ranks and the most of one rank, the set-up's
#     share (main thread), and the issue's target: the shards the batches read
#     (distinct files per rank, summed) + one set per node (every file of the
#     dataset directory once per node);
#   - dataset MiB read, total and the set-up's share;
#   - at resume, checkpoint opens and MiB read, total and per node, and the
#     target: 1.1 x (one copy per node of the checkpoint's files but the
#     optimizer parts + the optimizer parts once);
#   - the seconds from the launch (mpirun) to the run's first new row of
#     metrics.jsonl (its first step logged), polled every 50 ms as
#     dataset_scale_bench.sh does.
# Each rank's raw line stays in WORK/counts-<phase>-<R>/<pid>.txt (fields in
# io_counter.c). STRACE=1 also runs the first rank count's start-up under
# `strace -ff -e trace=open,openat` and prints its count of dataset opens
# beside the counter's (slow: its first-step time means nothing).
#
#   tests/bench/startup_io_bench.sh [ranks...]   (even counts; default 2 4 8 16;
#                                                 SHARDS=2000 BUILD_DIR=build WORK=/var/tmp/...
#                                                 PREPARE_RANKS=1 STRACE=0)
#   SHARDS=200 tests/bench/startup_io_bench.sh 2 4      (a small run, ~15 s on 2 cores)
# WORK (not removed) keeps the dataset (data-<SHARDS>, reused by a later run
# with the same WORK) and the runs.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
shards=${SHARDS:-2000}
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(2 4 8 16)
for r in "${ranks_list[@]}"; do
  if ! [[ $r =~ ^[0-9]+$ ]] || [ "$r" -lt 2 ] || [ $((r % 2)) != 0 ]; then
    echo "rank counts are even (2 nodes x R/2): $r" >&2; exit 2
  fi
done
source "$src/tests/script_lib.bash"
source "$src/tests/multinode/nodes.bash"
require_namespaces
# On the nodes' shared file system: /var/tmp (each node has its own /tmp).
work=$(realpath -m "${WORK:-$(mktemp -d /var/tmp/bench-startup-io.XXXXXX)}")
mkdir -p "$work"
cd "$work"
export NODE_SHELL_SHARED="$NODE_SHELL_SHARED:$work"  # bound back where WORK is under /tmp

cc -shared -fPIC -O1 -o io_counter.so "$src/tests/bench/io_counter.c" -ldl ||
  fail "cannot build the LD_PRELOAD library"

data=$work/data-$shards
if [ ! -f "$data/manifest.json" ]; then
  prepare=("$build/bin/prepare_data")
  [ "${PREPARE_RANKS:-1}" -gt 1 ] && prepare=(bash "$src/scripts/mpirun.sh" -np "$PREPARE_RANKS" "${prepare[@]}")
  rm -rf "$data"
  "${prepare[@]}" --task copy --out "$data" --seed 3 --train-size $((shards * 50)) \
    --valid-size 40 --test-size 0 --min-len 2 --max-len 9 --shard-size 50 \
    > "prepare-$shards.log" 2>&1 || fail "prepare_data" "prepare-$shards.log"
fi
dataset_files=$(find "$data" -maxdepth 1 -type f | wc -l)

# counted <phase> <R> <checkpoint dir counted> [trainer options...]: one run
# of io-<R> under the counter, on the nodes of ./hosts; the seconds from the
# launch to its first new metrics row into ./first-<phase>-<R>.
counted() {
  local phase=$1 ranks=$2 ckpt=$3; shift 3
  local name=io-$ranks counts=$work/counts-$phase-$ranks trace=()
  rm -rf "$counts"; mkdir -p "$counts"
  if [ "${STRACE:-0}" = 1 ] && [ "$phase" = start ] && [ "$ranks" = "${ranks_list[0]}" ]; then
    rm -rf "$work/strace"; mkdir -p "$work/strace"
    trace=(strace -ff -qq -e 'trace=open,openat' -o "$work/strace/t")
  fi
  /usr/bin/python3 - "runs/$name/metrics.jsonl" "$phase-$ranks.log" "first-$phase-$ranks" \
    timeout 600 "${trace[@]}" "${mpirun_nodes[@]}" \
    env LD_PRELOAD="$work/io_counter.so" IO_COUNT_DIR="$counts" IO_COUNT_DATA="$data" \
    IO_COUNT_CKPT="$ckpt" IO_COUNT_PATHS="$data:$work/runs/$name" \
    "$build/bin/trainer" "${TINY[@]}" --data.dir "$data" --run.name "$name" \
    --train.valid_every 0 --train.save_every_minutes 0 "$@" <<'PY' ||
import os, subprocess, sys, time
metrics, log, result, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
size = lambda: os.path.getsize(metrics) if os.path.exists(metrics) else 0
before = size()
start = time.time()
with open(log, "w") as out:
    job = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    first = None
    while job.poll() is None:
        if first is None and size() > before:
            first = time.time() - start
        time.sleep(0.05)
if first is None and size() > before:
    first = time.time() - start  # the run ended within the last poll
if job.returncode != 0:
    sys.exit(f"exit {job.returncode}")
open(result, "w").write(f"{first:.1f}" if first is not None else "nan")
PY
    fail "$phase on $ranks ranks" "$phase-$ranks.log"
  [ "$(find "$counts" -name '*.txt' | wc -l)" = "$ranks" ] ||
    fail "$phase on $ranks ranks: $(find "$counts" -name '*.txt' | wc -l) ranks counted, not $ranks" \
      "$phase-$ranks.log"
}

# The strace check: opens of the dataset's regular files (a directory open
# carries O_DIRECTORY) that succeeded, against the counter's.
strace_check() {  # <R>
  /usr/bin/python3 - "$work/strace" "$data" "$work/counts-start-$1" <<'PY'
import glob, os, re, sys
traces, data, counts = sys.argv[1:]
files = h5 = 0
for name in glob.glob(os.path.join(traces, "t.*")):
    for line in open(name, errors="replace"):
        m = re.match(r'open(?:at)?\((?:[^,]*, )?"([^"]*)", ([^,)]*).*\) = (-?\d+)', line)
        if not m or int(m.group(3)) < 0 or "O_DIRECTORY" in m.group(2): continue
        path = m.group(1)
        if not path.startswith(data + "/") or not os.path.isfile(path): continue
        files += 1
        h5 += path.endswith(".h5")
counted = sum(int(open(f).read().split()[2]) for f in glob.glob(os.path.join(counts, "*.txt")))
print(f"strace check, start-up: strace saw {files} opens of dataset files ({h5} of .h5 shards), "
      f"io_counter counted {counted}: {'the same' if files == counted else 'DIFFERENT'}")
PY
}

rows=$work/rows.txt
: > "$rows"
for ranks in "${ranks_list[@]}"; do
  name=io-$ranks
  rm -rf "runs/$name"
  write_hostfile $((ranks / 2)) $((ranks / 2))
  counted start "$ranks" "$work/runs/$name/checkpoints" --train.max_steps 2 --train.save_every 2
  if [ "${STRACE:-0}" = 1 ] && [ "$ranks" = "${ranks_list[0]}" ]; then
    strace_check "$ranks"
    echo "$(cat "first-start-$ranks")(strace)" > "first-start-$ranks"
  fi
  checkpoint=$work/runs/$name/checkpoints/step_00000002
  [ -f "$checkpoint/model.pt" ] || fail "no checkpoint of step 2" "start-$ranks.log"
  parts=$(find "$checkpoint" -maxdepth 1 -type f -name 'optimizer-*-of-*.pt' -printf '%s\n' |
          awk '{s += $1} END {print s + 0}')
  all=$(find "$checkpoint" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  echo "start $ranks $(cat "first-start-$ranks") $dataset_files $((all - parts)) $parts" >> "$rows"
  counted resume "$ranks" "$checkpoint" --train.max_steps 4 --resume latest
  grep -q "resuming from .*step_00000002" "resume-$ranks.log" || fail "did not resume" "resume-$ranks.log"
  echo "resume $ranks $(cat "first-resume-$ranks") $dataset_files $((all - parts)) $parts" >> "$rows"
done

/usr/bin/python3 - "$rows" "$work" "$shards" <<'PY'
import collections, glob, os, sys
rows, work, shards = sys.argv[1], sys.argv[2], int(sys.argv[3])
MiB = 2 ** 20
def ranks_of(phase, ranks):  # one dict per rank, from io_counter.c's lines
    keys = ("pid rank data_opens data_bytes ckpt_opens ckpt_bytes other_opens other_bytes "
            "main_data_opens main_data_bytes read_data_files host").split()
    out = []
    for f in glob.glob(os.path.join(work, f"counts-{phase}-{ranks}", "*.txt")):
        d = dict(zip(keys, open(f).read().split()))
        out.append({k: (v if k == "host" else int(v)) for k, v in d.items()})
    return out
table = collections.defaultdict(list)
for line in open(rows):
    phase, ranks, first, files, shared, parts = line.split()
    table[phase].append((int(ranks), first, int(files), int(shared), int(parts)))
print(f"\nDataset: {shards} training shards of 50 examples; one set = the dataset directory's files. "
      "Counted per rank process, its whole life (set-up and 2 steps); "
      "first step: launch to the first new metrics.jsonl row.")
for phase, title in (("start", "Start-up (a fresh run, 2 steps, a checkpoint saved)"),
                     ("resume", "Resume (the step-2 checkpoint, 2 more steps; the final save's read-back not counted)")):
    print(f"\n### {title}\n")
    head = ("| ranks (2 nodes) | dataset opens: total | max / rank | set-up's (main thread) | "
            "target: shards read + a set per node | dataset MiB read: total | set-up's |")
    if phase == "start":
        head += " checkpoint opens (the save's read-back) | checkpoint MiB |"
    else:
        head += (" checkpoint opens: total | per node | checkpoint MiB read: total | per node | "
                 "target MiB: 1.1 x (a copy per node + the optimizer parts) |")
    head += " launch → first step s |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for ranks, first, files, shared, parts in table[phase]:
        rs = ranks_of(phase, ranks)
        nodes = sorted({r["host"] for r in rs})
        total = lambda k: sum(r[k] for r in rs)
        node = lambda k: " / ".join(str(sum(r[k] for r in rs if r["host"] == n)) for n in nodes)
        node_mib = lambda k: " / ".join(
            f"{sum(r[k] for r in rs if r['host'] == n) / MiB:.2f}" for n in nodes)
        target = total("read_data_files") + len(nodes) * files
        line = (f"| {ranks} | {total('data_opens')} | {max(r['data_opens'] for r in rs)} | "
                f"{total('main_data_opens')} | {target} ({total('read_data_files')} + "
                f"{len(nodes)} x {files}) | {total('data_bytes') / MiB:.2f} | "
                f"{total('main_data_bytes') / MiB:.2f} |")
        if phase == "start":
            line += f" {total('ckpt_opens')} | {total('ckpt_bytes') / MiB:.2f} |"
        else:
            goal = 1.1 * (len(nodes) * shared + parts)
            line += (f" {total('ckpt_opens')} | {node('ckpt_opens')} | "
                     f"{total('ckpt_bytes') / MiB:.2f} | {node_mib('ckpt_bytes')} | "
                     f"{goal / MiB:.2f} |")
        print(line + f" {first} |")
print(f"\nRaw lines (io_counter.c's fields): {work}/counts-<phase>-<ranks>/")
PY
