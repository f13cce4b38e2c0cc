#!/usr/bin/env bash
# slurm/*.sh on a real single-node Slurm cluster (tests/slurm/cluster.bash):
#   - train.sh (ranks started by mpirun in the job) runs a tiny config to the
#     end: COMPLETED, final checkpoint, metrics;
#   - train.sh (ranks started by srun --mpi=pmix), USR1 sent to the batch
#     script mid-run: checkpoint, requeue (SLURM_RESTART_COUNT=1), resume from
#     that checkpoint, COMPLETED, parameters bitwise those of the run above
#     (the ranks are stopped, SIGSTOP, from before the signal is sent until
#     train.sh has passed it on: the run cannot end before it arrives);
#     eval.sh submitted with --dependency=afterok on it writes results.json;
#   - USR1 at a random moment of a job's first 2 s (3 times): requeued and
#     completed, also when the ranks could not catch it yet;
#   - the same when Slurm sends TERM to the whole job (scontrol requeue), and
#     under real preemption: a job of a higher-priority partition needs the
#     node, Slurm signals and requeues the training job;
#   - eval.sh --watch beside a training job scores each checkpoint, ends with it;
#   - docs/cluster.md's one-liner: prepare -> train -> eval chained with afterok.
# Installs Slurm and munge from Debian if missing; skips (exit 77) only where
# they cannot be installed, or their daemons cannot run (not root).
# Usage: cluster_jobs.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
source "$src/tests/slurm/cluster.bash"
install_slurm
enter_scratch slurm-jobs
trap 'stop_cluster; rm -rf "$work"' EXIT
trap 'exit 143' TERM; trap 'exit 130' INT
start_cluster
export REPO=$src BUILD=$build  # where the batch scripts find the project (slurm/lib.bash)
begin=$SECONDS

prepare_tiny data 20
last=400  # the runs' last step; checkpoints every 50
opts=("${TINY[@]}" --train.max_steps $last --train.save_every 50 --train.keep_last $((last / 50))
  --train.log_every 10 --model.dropout 0.1)
train() {  # <run dir> [sbatch options...]: submits train.sh on the tiny config; prints the job id
  local run=$1; shift
  submit "$@" "$src/slurm/train.sh" "$src/configs/default.toml" "$run" "${opts[@]}"
}
log_of() { job_field "$1" StdOut; }
# The trainer processes (ranks) of run <name> started in this test's directory.
ranks_of() {  # <run name>
  local pid
  for pid in $(pgrep -x trainer); do
    [ "$(readlink "/proc/$pid/cwd")" = "$work" ] &&
      grep -q -- "--run.name $1 " <<< "$(tr '\0' ' ' < "/proc/$pid/cmdline")" && echo "$pid"
  done
  return 0
}
# A USR1 under test reaches a run that cannot end first: stop_ranks, then
# the signal, then continue_after_usr1 lets the ranks go on once train.sh has
# passed the signal on to them.
stop_ranks() {  # <job> <run name>
  stopped=$(ranks_of "$2")
  [ "$(wc -w <<< "$stopped")" = 2 ] || fail "the 2 ranks of run $2: found '$stopped'" "$(log_of "$1")"
  kill -STOP $stopped
}
continue_after_usr1() {  # <job>
  within 60 "train.sh to pass SIGUSR1 on" grep -q "train: SIGUSR1 received" "$(log_of "$1")"
  kill -CONT $stopped
}
# The run was preempted once, requeued, resumed from that checkpoint and ended
# bitwise equal to the uninterrupted one.
requeued_and_equal() {  # <job> <run dir>
  local job=$1 run=$2 log step
  log=$(log_of "$job")
  [ "$(job_field "$job" Restarts)" = 1 ] || fail "job $job: $(job_field "$job" Restarts) restarts, expected 1" "$log"
  grep -q "SLURM_RESTART_COUNT=1," "$log" || fail "no second run with SLURM_RESTART_COUNT=1" "$log"
  step=$(grep -o "preempted: checkpoint of step [0-9]*" "$log" | grep -o "[0-9]*$") \
    || fail "no preemption checkpoint" "$log"
  ((step < last)) || fail "the run ended before the signal arrived" "$log"
  grep -q "resuming from .*step_$(printf %08d "$step")" "$log" || fail "did not resume from step $step" "$log"
  "$python" - "$run" <<'PY' || fail "$run differs from the uninterrupted run" "$log"
import sys, torch
a = torch.load("runs/whole/checkpoints/latest/model.pt")
b = torch.load(f"{sys.argv[1]}/checkpoints/latest/model.pt")
assert a.keys() == b.keys() and all(torch.equal(a[n], b[n]) for n in a), "parameters differ"
PY
  echo "$run: preempted at step $step, requeued, resumed, bitwise equal to the uninterrupted run"
}

# ---- an uninterrupted run, ranks started by mpirun ------------------------
job=$(LAUNCHER=mpirun train runs/whole)
wait_job "$job" COMPLETED 300
[ "$(job_field "$job" Restarts)" = 0 ] || fail "the uninterrupted run was requeued" "$(log_of "$job")"
[ "$(readlink runs/whole/checkpoints/latest)" = "$(printf step_%08d $last)" ] || fail "no final checkpoint" "$(log_of "$job")"
grep -q "\"step\":$last," runs/whole/metrics.jsonl || fail "metrics.jsonl lacks step $last" "$(log_of "$job")"
grep -q "train: run runs/whole complete" "$(log_of "$job")" || fail "no completion line" "$(log_of "$job")"
echo "uninterrupted: job $job COMPLETED, checkpoint step $last, $(wc -l < runs/whole/metrics.jsonl) metrics rows"

# ---- USR1 to the batch script: checkpoint, requeue, resume; eval after it --
job=$(train runs/usr1)
eval_job=$(submit --dependency="afterok:$job" "$src/slurm/eval.sh" runs/usr1)
within 120 "the first checkpoint of runs/usr1" test -e runs/usr1/checkpoints/step_00000050
stop_ranks "$job" usr1
scancel --signal=USR1 --batch "$job"
continue_after_usr1 "$job"
wait_job "$job" COMPLETED 300
requeued_and_equal "$job" runs/usr1
wait_job "$eval_job" COMPLETED 120
results=runs/usr1/eval/test-$(printf step_%08d $last)/results.json
test -s "$results" || fail "eval.sh wrote no results.json" "$(log_of "$eval_job")"
echo "eval.sh after the training job: $results"

# ---- USR1 in a job's first 2 seconds: before the trainer exists, while it
# loads LibTorch (it cannot catch the signal yet) or once it can: requeued
# and completed every time. Each run is long enough to be still training
# when the signal comes: 6 s of steps at the speed runs/whole measured here
# (its metrics' elapsed_s: seconds of training since the start of that one,
# never requeued, run), three times the latest moment of the signal -------
early_steps=$("$python" - <<'PY'
import json, math
last = [json.loads(line) for line in open("runs/whole/metrics.jsonl")][-1]
steps_per_s = last["step"] / last["elapsed_s"]
print(max(40, 20 * math.ceil(6 * steps_per_s / 20)))
PY
) || fail "no training speed in runs/whole/metrics.jsonl"
echo "USR1 early: runs of $early_steps steps (6 s at the speed of runs/whole)"
for trial in 1 2 3; do
  job=$(submit "$src/slurm/train.sh" "$src/configs/default.toml" runs/early$trial "${TINY[@]}" \
    --train.max_steps "$early_steps" --train.save_every $((early_steps / 2)))
  within 120 "job $job to start" test -s "train-$job.out"
  delay=$((RANDOM % 2000))
  sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
  scancel --signal=USR1 --batch "$job" ||
    fail "USR1 $delay ms after the start: scancel failed, job $job is $(job_field "$job" JobState)" "train-$job.out"
  wait_job "$job" COMPLETED 300
  [ "$(job_field "$job" Restarts)" = 1 ] || fail "USR1 $delay ms after the start: not requeued" "train-$job.out"
  [ "$(readlink runs/early$trial/checkpoints/latest)" = "$(printf step_%08d "$early_steps")" ] ||
    fail "USR1 $delay ms after the start: the run did not complete" "train-$job.out"
  echo "USR1 $delay ms after the job's start: requeued, completed ($(grep -o "train: .*before it could checkpoint\|train: preempted" "train-$job.out" | head -1))"
done

# ---- TERM to the whole job (here scontrol requeue; also the time limit, the
# end of a preemption's grace time): the ranks get it from Slurm and checkpoint
job=$(train runs/term)
within 120 "the first checkpoint of runs/term" test -e runs/term/checkpoints/step_00000050
scontrol requeue "$job"
wait_job "$job" COMPLETED 300
requeued_and_equal "$job" runs/term

# ---- real preemption: a job of the high partition needs the node ----------
job=$(train runs/preempted)
within 120 "the first checkpoint of runs/preempted" test -e runs/preempted/checkpoints/step_00000050
stop_ranks "$job" preempted
high=$(submit --partition=high --ntasks=2 --job-name=urgent --output=urgent-%j.out --wrap true)
continue_after_usr1 "$job"
wait_job "$high" COMPLETED 120
wait_job "$job" COMPLETED 300
requeued_and_equal "$job" runs/preempted

# ---- eval.sh --watch beside a training job (one rank each) ----------------
job=$(train runs/watched --ntasks-per-node=1)
watch=$(submit "$src/slurm/eval.sh" runs/watched --split valid --watch --poll-s 1)
wait_job "$job" COMPLETED 300
wait_job "$watch" COMPLETED 120
for step in $(seq 50 50 $last); do
  test -s "runs/watched/eval/valid-step_$(printf %08d $step)/results.json" \
    || fail "eval.sh --watch did not score step $step" "$(log_of "$watch")"
done
echo "eval.sh --watch beside training: scored steps 50 to $last, ended with the run"

# ---- docs/cluster.md's one-liner, from a checkout whose default config is short -
mkdir chain && cd chain
ln -s "$src/slurm" slurm
mkdir configs && sed 's/^max_steps = .*/max_steps = 20/' "$src/configs/default.toml" > configs/default.toml
chain=$(sed -n '/^    p=\$(sbatch --parsable slurm\/prepare.sh/,/slurm\/eval.sh/p' "$src/docs/cluster.md")
[ -n "$chain" ] || fail "no sbatch one-liner in docs/cluster.md"
echo "docs/cluster.md one-liner:"; echo "$chain"
job=$(eval "$chain" | grep -o "[0-9]*$")
wait_job "$job" COMPLETED 600
test -s runs/default/eval/test-step_00000020/results.json || fail "the chain wrote no results.json" "$(log_of "$job")"
echo "docs/cluster.md chain: prepare -> train -> eval COMPLETED, $(grep -o '"exact_match": *[0-9.]*' runs/default/eval/test-step_00000020/results.json || true)"

echo "slurm jobs: OK in $((SECONDS - begin)) s"
