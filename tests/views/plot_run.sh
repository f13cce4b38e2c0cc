#!/usr/bin/env bash
# scripts/plot_run.py on two short runs (a resumed seq2seq run with BLEU, a
# classifier with accuracy), overlaid: the PNG renders (its size, both runs'
# colours drawn), each plotted curve (--series) is the data of the run files
# (metrics.jsonl, valid.jsonl, eval/watch-valid.tsv; wall time carried across
# the resume), and bad run files are errors naming the file that leave an
# existing plot alone.
# Usage: plot_run.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
py=$(bash "$src/scripts/setup_python.sh") || { echo "SKIP: cannot install the Python tools"; exit 77; }
enter_scratch views-plot

watched_runs
"$py" "$src/scripts/plot_run.py" runs/reverse runs/majority -o plot.png --series series.json > plot.log 2>&1 \
  || fail "plot_run.py" plot.log
"$py" - <<'PY'
import csv, json
import matplotlib.image

def jsonl(path):
    return [json.loads(line) for line in open(path)]

def wall(rows):  # elapsed_s carried on where a resumed trainer starts again
    out, offset, previous = [], 0.0, 0.0
    for r in rows:
        offset += previous if r["elapsed_s"] < previous else 0.0
        previous = r["elapsed_s"]
        out.append(offset + r["elapsed_s"])
    return out

def close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= 1e-12 * max(1.0, abs(x)) for x, y in zip(a, b))

runs = {r["run"]: {p["title"]: {l["label"]: l for l in p["lines"]} for p in r["panels"]}
        for r in json.load(open("series.json"))}
assert list(runs) == ["reverse", "majority"], list(runs)
for name, panels in runs.items():
    train, valid = jsonl(f"runs/{name}/metrics.jsonl"), jsonl(f"runs/{name}/valid.jsonl")
    table = list(csv.DictReader(open(f"runs/{name}/eval/watch-valid.tsv"), delimiter="\t"))
    steps = [r["step"] for r in train]
    scored = [int(r["step"]) for r in table]
    assert steps == sorted(steps) and steps[-1] == 100, steps
    assert [r["step"] for r in valid] == list(range(10, 101, 10)), valid
    assert scored == sorted(scored) and len(scored) >= 4 and scored[-1] == 100, scored
    for title, label, key in (("loss", "train", "loss"), ("learning rate", "lr", "lr"),
                              ("throughput", "tokens/s", "tokens_per_s")):
        curve = panels[title][label]
        assert curve["x"] == steps and close(curve["y"], [r[key] for r in train]), (name, title)
    assert panels["loss"]["valid"]["x"] == [r["step"] for r in valid]
    assert close(panels["loss"]["valid"]["y"], [r["loss"] for r in valid])
    timed = panels["loss over time"]["train"]
    assert close(timed["x"], wall(train)) and close(timed["y"], [r["loss"] for r in train]), name
    assert all(b >= a for a, b in zip(timed["x"], timed["x"][1:])), f"{name}: wall time goes back"
    score = "valid BLEU" if name == "reverse" else "valid accuracy %"
    expected = [float(r["bleu"]) if name == "reverse" else 100 * float(r["accuracy"]) for r in table]
    assert set(panels["evaluation"]) == {score}, (name, list(panels["evaluation"]))
    assert panels["evaluation"][score]["x"] == scored and close(panels["evaluation"][score]["y"], expected)
    assert len(panels["evaluation over time"][score]["x"]) == len(scored)
resumed = [r["elapsed_s"] for r in jsonl("runs/reverse/metrics.jsonl")]
assert any(b < a for a, b in zip(resumed, resumed[1:])), "the resumed run's elapsed_s did not start again"

image = matplotlib.image.imread("plot.png")
assert image.shape[:2] == (850, 1600), image.shape
rgb = (image[..., :3] * 255).round()
def drawn(colour):  # pixels of a run's colour (matplotlib's first two: blue, orange)
    return int(((abs(rgb - colour) <= 2).all(axis=-1)).sum())
blue, orange = drawn((0x1f, 0x77, 0xb4)), drawn((0xff, 0x7f, 0x0e))
assert blue > 2000 and orange > 2000, f"run colours drawn: {blue}, {orange} pixels"
print(f"plot: 2 runs, every curve equal to the run files; {blue} / {orange} pixels of the runs' colours")
PY

# Bad input: named, exit 1, the existing plot untouched.
cp plot.png before.png
"$py" "$src/scripts/plot_run.py" runs/reverse data -o plot.png 2> missing.log && fail "a directory without metrics.jsonl was plotted"
grep -q "data/metrics.jsonl: no such file" missing.log || fail "the error does not name metrics.jsonl" missing.log
echo '{"step": 70, "loss": ' >> runs/majority/metrics.jsonl
line=$(wc -l < runs/majority/metrics.jsonl)
"$py" "$src/scripts/plot_run.py" runs/majority -o plot.png 2> broken.log && fail "a broken metrics.jsonl was plotted"
grep -q "runs/majority/metrics.jsonl:$line: not JSON" broken.log || fail "the error does not name the line" broken.log
cmp plot.png before.png || fail "a failed call changed the existing plot"
echo "plot_run: OK"
