#!/usr/bin/env bash
# scripts/to_tensorboard.py on two short runs (a resumed seq2seq run, a
# classifier): the event files, read back with TensorBoard's own
# EventAccumulator, hold every scalar of metrics.jsonl, valid.jsonl and
# eval/watch-valid.tsv at its step (float32), with wall times in training
# order; converting again replaces them; and `tensorboard --logdir runs`,
# started on 127.0.0.1 and asked over HTTP, serves the same curves.
# Usage: tensorboard_events.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
py=$(bash "$src/scripts/setup_python.sh") || { echo "SKIP: cannot install the Python tools"; exit 77; }
enter_scratch views-tensorboard

watched_runs
for _ in 1 2; do  # the second time replaces the first's files
  "$py" "$src/scripts/to_tensorboard.py" runs/reverse runs/majority > convert.log 2>&1 \
    || fail "to_tensorboard.py" convert.log
done
"$py" - <<'PY'
import csv, glob, json
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

def jsonl(path):
    return [json.loads(line) for line in open(path)]

def expected_series(run):
    """{(log dir, tag): [(step, value)]} from the run files."""
    out = {}
    def add(log_dir, step, tag, value):
        if value not in (None, "-"):
            out.setdefault((log_dir, tag), []).append((int(step), float(value)))
    for r in jsonl(f"runs/{run}/metrics.jsonl"):
        for tag in ("loss", "nll", "ppl", "lr", "grad_norm", "tokens_per_s"):
            add("train", r["step"], tag, r[tag])
    for r in jsonl(f"runs/{run}/valid.jsonl"):
        for tag in ("loss", "nll", "ppl"):
            add("valid", r["step"], tag, r[tag])
    for r in csv.DictReader(open(f"runs/{run}/eval/watch-valid.tsv"), delimiter="\t"):
        for tag in ("loss", "ppl", "bleu", "chrf", "exact_match", "accuracy"):
            add("watch-valid", r["step"], tag, r[tag])
    return out

got_tags = {}
for run in ("reverse", "majority"):
    expected = expected_series(run)
    for log_dir in ("train", "valid", "watch-valid"):
        files = glob.glob(f"runs/{run}/tensorboard/{log_dir}/events.out.tfevents.*")
        assert len(files) == 1, f"{run}/{log_dir}: {files}"
        events = EventAccumulator(f"runs/{run}/tensorboard/{log_dir}")
        events.Reload()
        tags = events.Tags()["scalars"]
        assert sorted(tags) == sorted(t for d, t in expected if d == log_dir), (run, log_dir, tags)
        for tag in tags:
            scalars = events.Scalars(tag)
            want = expected[(log_dir, tag)]
            assert [s.step for s in scalars] == [s for s, _ in want], (run, log_dir, tag)
            for s, (_, value) in zip(scalars, want):
                assert abs(s.value - value) <= 1e-6 * max(1.0, abs(value)), (run, log_dir, tag, s, value)
            walls = [s.wall_time for s in scalars]
            assert all(b >= a for a, b in zip(walls, walls[1:])), (run, log_dir, tag, "wall time goes back")
        got_tags[f"{run}/tensorboard/{log_dir}"] = tags
assert "bleu" in got_tags["reverse/tensorboard/watch-valid"]
assert "accuracy" in got_tags["majority/tensorboard/watch-valid"]
json.dump({f"reverse/tensorboard/{d}|{t}": v for (d, t), v in expected_series("reverse").items()},
          open("expected.json", "w"))  # for the server's check below
print(f"event files: {sum(len(t) for t in got_tags.values())} scalar series equal to the run files")
PY

# TensorBoard itself, on the loopback interface, stopped by its PID.
timeout 120 "$(dirname "$py")/tensorboard" --logdir runs --host 127.0.0.1 --port 0 > server.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 120); do grep -q "http://127.0.0.1:" server.log && break; sleep 0.5; done
url=$(grep -o "http://127.0.0.1:[0-9]*" server.log) || fail "tensorboard did not start" server.log
"$py" - "$url" <<'PY'
import json, sys, time, urllib.parse, urllib.request
url = sys.argv[1]
expected = json.load(open("expected.json"))
def get(path):
    return json.load(urllib.request.urlopen(url + path, timeout=30))
for _ in range(60):  # the server loads the event files in the background
    runs = get("/data/runs")
    if "reverse/tensorboard/watch-valid" in runs and "majority/tensorboard/train" in runs:
        break
    time.sleep(0.5)
assert {"reverse/tensorboard/train", "reverse/tensorboard/valid", "reverse/tensorboard/watch-valid",
        "majority/tensorboard/train"} <= set(runs), runs
for key, want in expected.items():
    run, tag = key.split("|")
    query = urllib.parse.urlencode({"run": run, "tag": tag})
    served = get(f"/data/plugin/scalars/scalars?{query}")  # [[wall time, step, value], ...]
    assert [s for _, s, _ in served] == [s for s, _ in want], (key, served)
    assert all(abs(v - w) <= 1e-6 * max(1.0, abs(w)) for (_, _, v), (_, w) in zip(served, want)), key
print(f"tensorboard --logdir runs serves the same {len(expected)} curves of runs/reverse")
PY
echo "tensorboard events: OK"
