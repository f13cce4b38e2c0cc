#!/usr/bin/env bash
# evaluate's progress lines while it decodes a split (base/progress.h):
# with --progress-s 0 one line per batch, done / total rising to the split's
# size with the percent and an H:MM:SS ETA; under mpirun -np 2 rank 0 alone
# logs, counting its share of the batches; by default (every 10 s) a short
# split gets only the final line.
# Usage: evaluate_progress.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch eval-progress

prepare_tiny data 120
trainer_run tiny 1 --train.max_steps 20 --train.save_every 20 || fail "training failed" tiny.log
evaluate() { "$build/bin/evaluate" --run runs/tiny --threads 1 --batch-tokens 64 "$@" > /dev/null; }
evaluate --progress-s 0 --out every 2> every.log || fail "evaluate --progress-s 0" every.log
timeout 300 bash "$src/scripts/mpirun.sh" -np 2 "$build/bin/evaluate" --run runs/tiny --threads 1 \
  --batch-tokens 64 --progress-s 0 --out two > /dev/null 2> two.log || fail "mpirun -np 2 evaluate" two.log
evaluate --out default 2> default.log || fail "evaluate" default.log
"$python" - <<'PY'
import re
LINE = re.compile(r"\[rank (\d)\] \[info\] evaluating test(?P<share> \(rank 0's share\))?: (?P<done>\d+) / "
                  r"(?P<total>\d+) sentences \((?P<percent>[\d.]+)%\), (?P<rate>[\d.]+) sentences/s, "
                  r"ETA (?P<eta>\d+:\d\d:\d\d)$")

def progress(log):
    text = open(log).read()
    batches = int(re.search(r"examples in (\d+) batches", text).group(1))
    lines = [m for m in map(LINE.search, text.splitlines()) if m]
    assert lines, f"{log}: no progress line"
    done = [int(m["done"]) for m in lines]
    assert done == sorted(set(done)), f"{log}: done does not rise: {done}"
    for m in lines:
        assert m.group(1) == "0", f"{log}: a progress line from rank {m.group(1)}"
        assert abs(float(m["percent"]) - 100 * int(m["done"]) / int(m["total"])) < 0.051, m.group(0)
    assert done[-1] == int(lines[-1]["total"]) and lines[-1]["eta"] == "0:00:00", lines[-1].group(0)
    return batches, lines

batches, lines = progress("every.log")
assert len(lines) == batches and int(lines[-1]["total"]) == 120 and not lines[-1]["share"], \
    (batches, [m.group(0) for m in lines])
batches, lines = progress("two.log")
share = int(lines[-1]["total"])
assert lines[-1]["share"] and 0 < share < 120 and len(lines) == (batches + 1) // 2, \
    (batches, [m.group(0) for m in lines])
_, lines = progress("default.log")
assert len(lines) == 1, [m.group(0) for m in lines]
print(f"progress: a line per batch, 120 sentences; rank 0's share under -np 2: {share}")
PY
echo "evaluate progress: OK"
