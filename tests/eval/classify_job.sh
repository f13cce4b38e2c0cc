#!/usr/bin/env bash
# Text classification end to end on the synthetic majority task (which of
# s0..s3 occurs most often): prepare -> train on 2 ranks -> evaluate. The
# trained classifier reaches >= 95% test accuracy (100% in our runs);
# accuracy and macro-F1 in results.json equal those computed in Python from
# predictions.txt against the labels h5py reads from the shards; -np 2
# predictions equal -np 1's; --translate of the test texts gives the same classes.
# Usage: classify_job.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch eval-classify

"$build/bin/prepare_data" --task majority --out data/majority --seed 1 --train-size 4000 \
  --valid-size 200 --test-size 300 --symbols 10 --classes 4 --min-len 6 --max-len 16 > prepare.log 2>&1 \
  || fail "prepare_data --task majority" prepare.log
timeout 600 bash "$src/scripts/mpirun.sh" -np 2 "$build/bin/trainer" --config "$src/configs/classify.toml" \
  --data.dir data/majority --run.out_dir runs --train.max_steps 250 --train.save_every 250 \
  --train.valid_every 250 > train.log 2>&1 || fail "training the classifier" train.log
"$build/bin/evaluate" --run runs/classify --out one > one.json 2> one.log || fail "evaluate" one.log
timeout 300 bash "$src/scripts/mpirun.sh" -np 2 "$build/bin/evaluate" --run runs/classify --out two \
  > /dev/null 2> two.log || fail "mpirun -np 2 evaluate" two.log
cmp one/predictions.txt two/predictions.txt || fail "-np 2 predictions differ from -np 1"

"$python" - <<'PY'
import glob, h5py, json
names = open("data/majority/labels.txt").read().split("\n")[:-1]
truth = []
for f in sorted(glob.glob("data/majority/test-*.h5")):
    with h5py.File(f) as h:
        truth += [names[i] for i in h["labels"][:]]
pred = open("one/predictions.txt").read().split("\n")[:-1]
assert len(pred) == len(truth) == 300, (len(pred), len(truth))
accuracy = sum(p == t for p, t in zip(pred, truth)) / len(truth)
f1 = []
for c in sorted(set(truth) | set(pred)):
    tp = sum(p == c and t == c for p, t in zip(pred, truth))
    fp = sum(p == c and t != c for p, t in zip(pred, truth))
    fn = sum(p != c and t == c for p, t in zip(pred, truth))
    f1.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
r = json.load(open("one/results.json"))
assert r["task"] == "classification" and "bleu" not in r, r
assert abs(r["accuracy"] - accuracy) < 1e-12 and abs(r["macro_f1"] - sum(f1) / len(f1)) < 1e-12, r
print(f"classifier: accuracy {accuracy:.3f}, macro-F1 {sum(f1) / len(f1):.3f}, loss {r['loss']:.3f}")
assert accuracy >= 0.95, f"the classifier reached only {accuracy:.3f} accuracy"
PY
# --translate classifies: the test split's texts give the split's predictions.
"$python" "$src/scripts/dataset_to_tsv.py" data/majority test | cut -f2- > test.txt
"$build/bin/evaluate" --run runs/classify --translate test.txt > classified.txt 2> classify.log \
  || fail "--translate on a classification run" classify.log
cmp classified.txt one/predictions.txt || fail "--translate classes differ from the split's predictions"
echo "classification job: OK"
