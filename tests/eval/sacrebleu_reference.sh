#!/usr/bin/env bash
# BLEU and chrF against sacreBLEU itself (PyPI, pinned in scripts/python_tools.txt;
# scripts/setup_python.sh installs it into .venv/tools):
#   - build/bin/score on generated corpora, every tokenizer and smoothing,
#     chrF and chrF++ (sacrebleu_reference.py): scores, statistics, signatures;
#   - the evaluation job's own results.json on a tiny trained run of the
#     Chinese couplet sample, for each --bleu-tokenize;
#   - scoring that fails after decoding keeps the hypotheses.
# Usage: sacrebleu_reference.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
py=$(bash "$src/scripts/setup_python.sh") || { echo "SKIP: cannot install the Python tools"; exit 77; }
enter_scratch eval-sacrebleu

"$py" "$src/tests/eval/sacrebleu_reference.py" "$build/bin/score" corpora || fail "score differs from sacreBLEU"

# score's bad input: exit 1, naming the file (and line).
printf 'a b\nc\n' > hyps.txt; printf 'a b\n' > short.txt; printf 'a b\nc \xff\n' > latin1.txt
expect_error() {  # <message> <score arguments...>
  local message=$1; shift
  "$build/bin/score" "$@" > /dev/null 2> error.log && fail "score $* should fail"
  [ $? -eq 1 ] && grep -qF "$message" error.log || fail "score $*: expected exit 1 and '$message'" error.log
}
expect_error "cannot read missing.txt" hyps.txt missing.txt
expect_error "short.txt has 1 lines, hyps.txt 2" hyps.txt short.txt
expect_error "latin1.txt:2: invalid UTF-8" hyps.txt latin1.txt
expect_error "unknown BLEU tokenizer 'intl'" hyps.txt hyps.txt --tokenize intl

# The evaluation job's own output: a tiny model half-learns to copy sentences
# with punctuation, digits, entities and several scripts (word vocabulary);
# results.json of each --bleu-tokenize against sacreBLEU on hypotheses.txt
# and the reference file.
"$py" - <<'PY'
import random
rng = random.Random(7)
words = ["the", "dog", "end.", "3.5", "1,000", "(hi)", "&quot;ok&quot;", "it's", "3-4", "U.S.", "Straße",
         "ΟΔΟΣ", "春风", "教我中文吧", "e.g.", "x,y", "a/b", "10%", "İ", "😀"]
for split, n in (("train", 400), ("test", 40)):
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 8))) for _ in range(n)]
    for side in ("src", "tgt"):
        open(f"{split}.{side}", "w", encoding="utf-8").write("".join(l + "\n" for l in lines))
PY
"$build/bin/prepare_data" --task text --vocab word --joint-vocab --out data --train-src train.src \
  --train-tgt train.tgt --valid-src test.src --valid-tgt test.tgt --test-src test.src --test-tgt test.tgt \
  > prepare.log 2>&1 || fail "prepare_data" prepare.log
trainer_run copy 1 --train.max_steps 150 --train.save_every 150 || fail "training" copy.log
for tok in 13a zh char none; do
  "$build/bin/evaluate" --run runs/copy --bleu-tokenize $tok --out eval-$tok --threads 1 > /dev/null 2> eval-$tok.log \
    || fail "evaluate --bleu-tokenize $tok" eval-$tok.log
done
"$py" - <<'PY'
import json
from sacrebleu.metrics import BLEU, CHRF
refs = open("test.tgt", encoding="utf-8").read().split("\n")[:-1]
for tok in ("13a", "zh", "char", "none"):
    r = json.load(open(f"eval-{tok}/results.json"))
    hyps = open(f"eval-{tok}/hypotheses.txt", encoding="utf-8").read().split("\n")[:-1]
    assert r["references"].endswith("test.tgt") and len(hyps) == len(refs) == 40, (r["references"], len(hyps))
    bleu, chrf = BLEU(tokenize=tok), CHRF()
    b, c = bleu.corpus_score(hyps, [refs]), chrf.corpus_score(hyps, [refs])
    expected = {"score": b.score, "precisions": b.precisions, "bp": b.bp, "sys_len": b.sys_len,
                "ref_len": b.ref_len, "signature": str(bleu.get_signature())}
    near = lambda got, want: all(abs(g - w) <= 1e-9 for g, w in zip(got, want)) and len(got) == len(want)
    for key, want in expected.items():
        got = r["bleu"][key]
        same = near(got, want) if key == "precisions" else near([got], [want]) if key in ("score", "bp") \
            else got == want
        assert same, f"tok {tok}: bleu {key}: sacreBLEU {want!r}, evaluate {got!r}"
    assert abs(r["chrf"]["score"] - c.score) <= 1e-9, (tok, r["chrf"]["score"], c.score)
    assert r["chrf"]["signature"] == str(chrf.get_signature()), r["chrf"]["signature"]
    print(f"evaluate --bleu-tokenize {tok}: BLEU {b.score:.2f} ({bleu.get_signature()}), chrF {c.score:.2f}"
          " = sacreBLEU")
PY

# Scoring that fails after the decoding (a reference file of 3 lines for 40
# examples, the manifest pointing to it): exit 1 naming the cause, and the
# hypotheses decoded kept.
head -3 test.tgt > short.tgt
"$py" - <<'PY'
import hashlib, json, os
m = json.load(open("data/manifest.json"))
m["splits"]["test"]["sources"][1] = {"path": os.path.abspath("short.tgt"),
                                     "sha256": hashlib.sha256(open("short.tgt", "rb").read()).hexdigest()}
json.dump(m, open("data/manifest.json", "w"), indent=2)
PY
"$build/bin/evaluate" --run runs/copy --out eval-short --threads 1 > /dev/null 2> eval-short.log &&
  fail "evaluate against a reference file too short should fail"
grep -q "scoring failed: .*short.tgt has 3 lines" eval-short.log &&
  grep -qF "the 40 outputs decoded are kept in eval-short/hypotheses.txt" eval-short.log ||
  fail "the scoring failure should name its cause and the hypotheses kept" eval-short.log
cmp eval-short/hypotheses.txt eval-13a/hypotheses.txt || fail "the hypotheses kept differ from a scored run's"
echo "sacreBLEU reference: OK"
