#!/usr/bin/env bash
# The evaluation job on a tiny trained run: -np 2 and --threads 2 output
# identical to -np 1 (its decode_seconds within its seconds),
# beam 1 identical to greedy, checkpoint averaging against the mean computed
# by Python's torch, translate from stdin against the split's hypotheses, and
# bad input (missing split, a dataset the checkpoint does not fit, a damaged
# model.pt, empty input, invalid UTF-8, a directory that is not a run, options
# of two jobs at once),
# and the run's paths saved absolute (evaluate from another directory).
# Usage: evaluate_job.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch eval-job

prepare_tiny data 60
trainer_run tiny 1 --train.max_steps 40 --train.save_every 10 --train.keep_last 10 \
  || fail "training failed" tiny.log
run=runs/tiny
evaluate() { "$build/bin/evaluate" --run "$run" --threads 1 "$@"; }
mpi_evaluate() {  # <ranks> [evaluate options...]
  local ranks=$1; shift
  timeout 300 bash "$src/scripts/mpirun.sh" -np "$ranks" "$build/bin/evaluate" --run "$run" --threads 1 "$@"
}

# 1 rank vs 2 ranks (small batches: several per rank), greedy and beam 4.
for decode in "--beam 1" "--beam 4"; do
  evaluate $decode --batch-tokens 64 --out one > one.json 2> one.log || fail "evaluate $decode" one.log
  mpi_evaluate 2 $decode --batch-tokens 64 --out two > two.json 2> two.log || fail "mpirun -np 2 evaluate $decode" two.log
  cmp one/hypotheses.txt two/hypotheses.txt || fail "$decode: -np 2 hypotheses differ from -np 1"
  # Two threads decode a batch's sentences in two shares (eval/rows_in_parallel.h):
  # the same hypotheses, but for a near-tie that the last bits of a score would turn.
  "$build/bin/evaluate" --run "$run" --threads 2 $decode --batch-tokens 64 --out threads2 > /dev/null \
    2> threads2.log || fail "evaluate --threads 2 $decode" threads2.log
  cmp one/hypotheses.txt threads2/hypotheses.txt || fail "$decode: --threads 2 hypotheses differ from --threads 1"
  "$python" - one/results.json two/results.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["num_examples"] == b["num_examples"] == 60, (a["num_examples"], b["num_examples"])
assert (a["ranks"], b["ranks"]) == (1, 2)
for key in ("loss", "nll", "ppl", "exact_match"):
    assert a[key] == b[key], (key, a[key], b[key])
# The decoding's own time: part of the whole scoring's, on each rank count.
for r in (a, b):
    assert 0 < r["decode_seconds"] < r["seconds"], (r["decode_seconds"], r["seconds"])
PY
  cp one/hypotheses.txt "hyps${decode// /}.txt"
done
test "$(wc -l < hyps--beam1.txt)" -eq 60 || fail "hypotheses.txt should have 60 lines"
grep -q '"method": "beam"' one/results.json || fail "results.json does not describe beam search"

# Averaging: one checkpoint equals that checkpoint; three equal the tensor mean.
step30=$(realpath $run/checkpoints/step_00000030)
evaluate --checkpoint "$step30" --out single --save-weights single.pt > /dev/null 2> single.log \
  || fail "evaluate --checkpoint step 30" single.log
evaluate --checkpoint "$step30" --average-last 1 --out avg1 > /dev/null 2>&1 || fail "--average-last 1"
cmp single/hypotheses.txt avg1/hypotheses.txt || fail "--average-last 1 differs from the checkpoint"
evaluate --checkpoint "$step30" --average-last 3 --out avg3 --save-weights avg3.pt > /dev/null 2> avg3.log \
  || fail "--average-last 3" avg3.log
"$python" - "$run/checkpoints" <<'PY'
import json, sys, torch
ckpt = sys.argv[1]
single = torch.load("single.pt", weights_only=True)
base = torch.load(f"{ckpt}/step_00000030/model.pt")
assert all(torch.equal(single[k], base[k]) for k in base), "averaging one checkpoint changed it"
parts = [torch.load(f"{ckpt}/step_{s:08d}/model.pt") for s in (10, 20, 30)]
avg = torch.load("avg3.pt", weights_only=True)
worst = max(((sum(p[k].double() for p in parts) / 3).float() - avg[k]).abs().max().item() for k in avg)
assert worst <= 1e-6, f"averaged weights differ from the mean by {worst}"
assert any(not torch.equal(parts[0][k], parts[2][k]) for k in avg), "checkpoints are identical"
r = json.load(open("avg3/results.json"))
assert len(r["checkpoints"]) == 3 and r["step"] == 30, r["checkpoints"]
print(f"average of 3 checkpoints: max |difference| from the torch mean {worst:.2e}")
PY
evaluate --checkpoint "$step30" --average-last 4 > /dev/null 2> avg4.log && fail "averaging 4 of 3 should fail"
grep -q "only 3 checkpoints" avg4.log || fail "--average-last 4 error does not say how many exist" avg4.log

# Translate: the test split's source text through stdin equals the split's greedy hypotheses.
"$python" - <<'PY' > test.src
import glob, h5py
vocab = open("data/vocab.txt").read().split("\n")
for f in sorted(glob.glob("data/test-*.h5")):
    with h5py.File(f) as h:
        src, off = h["src/tokens"][:], h["src/offsets"][:]
        for i in range(len(off) - 1):
            print(" ".join(vocab[t] for t in src[off[i]:off[i + 1]]))
PY
test "$(wc -l < test.src)" -eq 60 || fail "could not read the test sources with h5py"
evaluate --translate - --batch-tokens 64 < test.src > translated.txt 2> translate.log || fail "--translate -" translate.log
cmp translated.txt hyps--beam1.txt || fail "translations of the test sources differ from the split's hypotheses"
cat test.src | head -3 | evaluate --translate - > piped.txt 2> piped.log || fail "--translate from a pipe" piped.log
cmp piped.txt <(head -3 hyps--beam1.txt) || fail "line-by-line translations differ"
# CRLF line ends (a file from a Windows editor) are LF ones, as prepare_data reads them:
# the same translations, the same token ids from tokenize.
sed 's/$/\r/' test.src > test-crlf.src
evaluate --translate test-crlf.src --batch-tokens 64 > crlf.txt 2> crlf.log || fail "--translate of CRLF text" crlf.log
cmp crlf.txt translated.txt || fail "CRLF line ends change the translations"
"$build/bin/tokenize" --data data --side src < test.src > ids.txt || fail "tokenize"
"$build/bin/tokenize" --data data --side src < test-crlf.src > ids-crlf.txt || fail "tokenize of CRLF text"
cmp ids-crlf.txt ids.txt || fail "CRLF line ends change tokenize's ids"

# Bad input: a clear message and exit 1.
expect_error() {  # <pattern> <evaluate options...>
  local pattern=$1; shift
  if evaluate "$@" > /dev/null 2> err.log; then fail "evaluate $* should fail"; fi
  grep -q "$pattern" err.log || fail "evaluate $*: message lacks '$pattern'" err.log
}
expect_error "has no split 'nope'" --split nope
prepare_tiny other 0 20
expect_error "does the checkpoint belong to dataset other" --data other --split valid
: > empty.txt
expect_error "empty.txt is empty" --translate empty.txt
expect_error "no best checkpoint" --checkpoint best
expect_error "is a file, not a checkpoint directory" --checkpoint "$step30/model.pt"
# A model.pt that no longer matches its SHA256SUMS entry is refused, naming
# it; the optimizer's state, which evaluation does not read, is not checked.
cp -r "$step30" bad-model
cp -r "$step30" bad-optimizer
printf x >> bad-model/model.pt
printf x >> bad-optimizer/optimizer.pt
expect_error "checkpoint fails verification: .*bad-model/model.pt does not match its SHA256SUMS entry" \
  --checkpoint "$PWD/bad-model"
evaluate --checkpoint "$PWD/bad-optimizer" --out bad-optimizer-scores > /dev/null 2> err.log \
  || fail "evaluate of a checkpoint whose optimizer.pt is damaged" err.log
cmp single/hypotheses.txt bad-optimizer-scores/hypotheses.txt || fail "other weights than step 30's"
printf 's1 s2\n\xff s3\ns4\n' > latin1.txt  # line 1 is answered, then the refusal
status=0; evaluate --translate latin1.txt > latin1.out 2> err.log || status=$?
[ "$status" -eq 1 ] || fail "--translate of invalid UTF-8: exit $status, expected 1" err.log
grep -q "latin1.txt: line 2 is not valid UTF-8 (byte 1 of the line); the 1 lines before it are translated" \
  err.log || fail "--translate of invalid UTF-8: unclear message" err.log
[ "$(wc -l < latin1.out)" -eq 1 ] || fail "--translate of invalid UTF-8: the line before it is not written" latin1.out

# Options of two jobs at once: exit 2 naming both, not one silently ignored.
expect_usage() {  # <message> <evaluate options...>
  local message=$1 status=0; shift
  evaluate "$@" > /dev/null 2> err.log || status=$?
  [ "$status" -eq 2 ] || fail "evaluate $*: exit $status, expected 2" err.log
  grep -q -F -- "$message" err.log || fail "evaluate $*: message lacks '$message'" err.log
}
expect_usage "--translate (job.translate) excludes --watch (job.watch)" --translate test.src --watch
expect_usage "--translate (job.translate) excludes --split (score.split)" \
  --translate test.src --split test
expect_usage "--watch (job.watch) excludes --checkpoint (run.checkpoint)" --watch --checkpoint best
expect_usage "--poll-s (job.poll_s) requires --watch (job.watch)" --poll-s 5
# The same refusal where the settings file gives one of the two.
printf '[job]\nwatch = true\n' > watch.toml
expect_usage "job.watch in watch.toml excludes --checkpoint (run.checkpoint)" \
  --config watch.toml --checkpoint best
# A run directory whose name holds a newline (a file name may): scored as any.
cp -r "$run" $'runs/new\nline'
"$build/bin/evaluate" --run $'runs/new\nline' --threads 1 --beam 1 --batch-tokens 64 --out nl-eval \
  > /dev/null 2> nl.log ||
  fail "evaluate of a run directory with a newline in its name" nl.log
cmp nl-eval/hypotheses.txt hyps--beam1.txt || fail "the run with a newline in its name scores otherwise"
# A tokenizer this build lacks (sacreBLEU's intl): refused before decoding.
status=0; evaluate --bleu-tokenize intl > /dev/null 2> err.log || status=$?
[ "$status" -eq 2 ] || fail "--bleu-tokenize intl: exit $status, expected 2" err.log
grep -q -F "bleu_tokenize) must be one of {auto, 13a, char, none, zh}, got 'intl'" err.log ||
  fail "--bleu-tokenize intl: the message does not name the known ones" err.log
! grep -q "evaluating step" err.log || fail "--bleu-tokenize intl: refused only after decoding" err.log

# The run's paths are saved absolute: evaluate from another directory finds
# the dataset the trainer was given as a relative data.dir.
grep -q "^dir = \"$(pwd -P)/data\"$" $run/config.toml || fail "data.dir not saved absolute" $run/config.toml
(cd / && "$build/bin/evaluate" --run "$OLDPWD/$run" --threads 1 --out "$OLDPWD/elsewhere") \
  > /dev/null 2> elsewhere.log || fail "evaluate from another directory" elsewhere.log
cmp elsewhere/hypotheses.txt hyps--beam1.txt || fail "evaluate from elsewhere differs"
sed -i "s|^dir = .*|dir = \"moved/data\"|" $run/config.toml  # an older run's relative data.dir
expect_error "dataset directory moved/data (data.dir in $run/config.toml) does not exist here" --split test
grep -q -- "--data DIR" err.log || fail "the missing dataset's message does not say the way on" err.log

status=0; "$build/bin/evaluate" --run data > /dev/null 2> err.log || status=$?
[ "$status" -eq 1 ] || fail "evaluate --run on a dataset directory: exit $status, expected 1" err.log
grep -q "data: no config.toml: not a run directory" err.log || fail "evaluate --run data: unclear error" err.log
echo "evaluation job: OK"
