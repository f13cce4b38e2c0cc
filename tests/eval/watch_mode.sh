#!/usr/bin/env bash
# evaluate --watch beside a training run: it scores the checkpoints written
# while it runs (some before training ends), one table row each, and exits
# once the run is finished; started again, it skips what is already scored.
# A second watcher of the same run and split meanwhile is refused, naming the
# first; checkpoints pruned under a watcher's feet are skipped and said so. A
# watcher started before its run waits for it. Averaging the last checkpoints
# of a run that prunes them scores, or says one was pruned while read.
# Usage: watch_mode.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch eval-watch

prepare_tiny data
wait_for() {  # <file> <what, if it never appears> [log]: up to 60 s
  for _ in $(seq 300); do [ -s "$1" ] && return; sleep 0.2; done
  fail "$2" "${3:-}"
}
# The watcher starts first (a Slurm job that got its node sooner): it waits
# for the run to begin.
timeout 300 "$build/bin/evaluate" --run runs/watched --split valid --watch --poll-s 0.5 --threads 1 \
  > watch.log 2>&1 &
watcher=$!
for _ in $(seq 300); do grep -q "waiting for" watch.log && break; sleep 0.2; done
grep -q "waiting for .*runs/watched/config.toml to appear: its training run has not started" \
  watch.log || fail "the watcher of a run not yet started does not wait for it" watch.log
trainer_run watched 1 --train.max_steps 120 --train.save_every 20 --train.keep_last 10 &
trainer=$!
wait $watcher || fail "evaluate --watch failed" watch.log
wait $trainer || fail "training failed" watched.log
[ -f runs/watched/finished.json ] || fail "the run is not marked finished" watched.log

table=runs/watched/eval/watch-valid.tsv
"$python" - "$table" runs/watched <<'PY'
import csv, json, os, sys
table, run = sys.argv[1:]
rows = list(csv.DictReader(open(table), delimiter="\t"))
steps = [int(r["step"]) for r in rows]
assert steps == [20, 40, 60, 80, 100, 120], f"scored steps {steps}"
for r in rows:
    res = json.load(open(f"{run}/eval/valid-step_{int(r['step']):08d}/results.json"))
    assert abs(float(r["loss"]) - res["loss"]) < 1e-9 and res["step"] == int(r["step"]), r
finished = os.path.getmtime(f"{run}/finished.json")
early = [r["step"] for r in rows
         if os.path.getmtime(f"{run}/eval/valid-step_{int(r['step']):08d}/results.json") < finished]
assert early, "no checkpoint was scored while training was running"
print(f"scored {steps}; {len(early)} of them before training finished")
PY
before=$(wc -l < "$table")
timeout 60 "$build/bin/evaluate" --run runs/watched --split valid --watch --poll-s 0.5 --threads 1 \
  > rewatch.log 2>&1 || fail "a second watcher failed" rewatch.log
[ "$(wc -l < "$table")" -eq "$before" ] || fail "a second watcher scored checkpoints again" rewatch.log

# Two at once: a watcher of a run that is not finished (it waits for more)
# holds the lock; a second one of the same run and split is refused, naming it.
cp -r runs/watched runs/unfinished && rm runs/unfinished/finished.json runs/unfinished/eval/.watch-valid.lock
timeout 300 "$build/bin/evaluate" --run runs/unfinished --split valid --watch --poll-s 0.5 \
  --threads 1 > first.log 2>&1 &
first=$!
wait_for runs/unfinished/eval/.watch-valid.lock "the first watcher took no lock" first.log
if timeout 60 "$build/bin/evaluate" --run runs/unfinished --split valid --watch --poll-s 0.5 \
     --threads 1 > second.log 2>&1; then
  fail "a second watcher of the same run and split was not refused" second.log
fi
grep -q "watch-valid.tsv is being written by another evaluate --watch (host .*, PID [0-9]" \
  second.log || fail "the second watcher's refusal does not name the first" second.log
kill "$first"; wait "$first" 2> /dev/null || true

# Pruned under the watcher's feet: a checkpoint every 2 steps, only the
# newest kept, polls every 0.05 s. Those removed before they are scored are
# skipped with a warning; the watcher ends with the run (exit 0), the last
# checkpoint scored.
trainer_run pruned 1 --train.max_steps 150 --train.save_every 2 --train.keep_last 1 &
trainer=$!
wait_for runs/pruned/config.toml "the trainer did not start" pruned.log
timeout 300 "$build/bin/evaluate" --run runs/pruned --split valid --watch --poll-s 0.05 \
  --threads 1 > pruned-watch.log 2>&1 || fail "evaluate --watch under pruning failed" pruned-watch.log
wait $trainer || fail "training failed" pruned.log
tail -1 runs/pruned/eval/watch-valid.tsv | grep -q "^150	" ||
  fail "the last checkpoint is not scored" runs/pruned/eval/watch-valid.tsv
echo "under pruning: $(grep -c 'was removed before it was scored' pruned-watch.log) checkpoints skipped"

# Averaging the last two of a run that prunes to two, a checkpoint a step:
# each try scores, or fails saying a checkpoint was pruned while it was read
# (never a misleading error about the dataset).
# (At most a few minutes of training, should a check fail before the kill.)
trainer_run averaged 1 --train.max_steps 5000 --train.save_every 1 --train.keep_last 2 &
trainer=$!
checkpoints() { ls -d runs/averaged/checkpoints/step_* 2> /dev/null | wc -l; }
# (Decided inside the loop: counted again after it, a listing taken while
# the trainer renames one checkpoint in and another out can miss one.)
two=false
for _ in $(seq 300); do [ "$(checkpoints)" -ge 2 ] && two=true && break; sleep 0.2; done
$two || fail "no two checkpoints to average within 60 s" averaged.log
outcomes=()
for try in $(seq 8); do
  status=0
  "$build/bin/evaluate" --run runs/averaged --split valid --average-last 2 --threads 1 \
    > "average$try.log" 2>&1 || status=$?
  [ "$status" = 0 ] || grep -q "was removed while it was read: its training run keeps only" \
    "average$try.log" || fail "averaging under pruning: exit $status" "average$try.log"
  outcomes+=("$status")
done
kill -TERM $(pids_matching "^$build/bin/trainer .*--run.name averaged( |$)") 2> /dev/null || true
wait "$trainer" 2> /dev/null || true  # preempted: exit 75
echo "averaging under pruning: exit codes ${outcomes[*]}"
echo "watch mode: OK"
