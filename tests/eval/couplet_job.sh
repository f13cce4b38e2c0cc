#!/usr/bin/env bash
# Chinese couplets at the character level end to end: the sample of 32 pairs
# (tests/data/couplet) prepared with --vocab char --strip-spaces, a tiny
# model trained until it has memorised them, evaluated: BLEU uses sacreBLEU's
# char tokenizer (signature tok:char), hypotheses are UTF-8 lines of whole
# characters, and the memorised pairs come back (exact match >= 90%, chrF
# high); --translate of the unspaced upper lines gives the same lower lines.
# Usage: couplet_job.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch eval-couplet

sample=$src/tests/data/couplet
"$build/bin/prepare_data" --task text --vocab char --joint-vocab --strip-spaces --out data \
  --train-src "$sample/in.txt" --train-tgt "$sample/out.txt" \
  --test-src "$sample/in.txt" --test-tgt "$sample/out.txt" > prepare.log 2>&1 || fail "prepare_data" prepare.log
trainer_run couplet 1 --data.batch_tokens 400 --model.d_model 64 --model.d_ff 128 \
  --model.share_embeddings true --optim.lr 1.0 --optim.warmup_steps 30 --optim.label_smoothing 0 \
  --model.dropout 0 --train.max_steps 300 --train.save_every 300 --train.log_every 50 \
  || fail "training" couplet.log
"$build/bin/evaluate" --run runs/couplet --out eval > eval.json 2> eval.log || fail "evaluate" eval.log
"$python" - "$sample/out.txt" <<'PY'
import json, sys
r = json.load(open("eval/results.json"))
hyps = open("eval/hypotheses.txt", encoding="utf-8").read().split("\n")[:-1]
refs = [l.replace(" ", "") for l in open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]]
assert len(hyps) == len(refs) == 32, (len(hyps), len(refs))
assert "tok:char" in r["bleu"]["signature"], r["bleu"]["signature"]
assert all(all("\u4e00" <= c <= "\u9fff" or c in "，。" for c in h) for h in hyps), hyps
exact = sum(h == t for h, t in zip(hyps, refs)) / len(refs)
print(f"couplets: exact match {exact:.3f} (results {r['exact_match']:.3f}), BLEU {r['bleu']['score']:.1f}, "
      f"chrF {r['chrf']['score']:.1f}")
assert abs(exact - r["exact_match"]) < 1e-12
assert exact >= 0.9 and r["chrf"]["score"] >= 90, "the memorised couplets did not come back"
PY
tr -d ' ' < "$sample/in.txt" | "$build/bin/evaluate" --run runs/couplet --translate - > translated.txt 2> translate.log \
  || fail "--translate" translate.log
cmp translated.txt eval/hypotheses.txt || fail "translations differ from the split's hypotheses"
echo "couplet job: OK"
