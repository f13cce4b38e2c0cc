#!/usr/bin/env bash
# Decoding speed of a trained model in this project's evaluate and in its
# exports, in one run and one table: sentences/s and target tokens/s on the same
# test split for evaluate (greedy, beam 4), CTranslate2 (fp32 and int8) and
# transformers (greedy, beam 4), all with THREADS threads (default 1) and batches
# of BATCH_TOKENS (evaluate's default, 4096). Beam 4 without length penalty in
# all three. The model: a small post-norm Transformer (d_model 64, 4 heads,
# d_ff 256, 2 + 2 layers, shared and tied embeddings), trained STEPS steps (800,
# one thread) on a made-up word-for-word translation task (20 words; a word
# vocabulary, so that a hypothesis's tokens are its words); test split of
# SENTENCES (500). Exact match is printed with the table: an untrained model
# would decode to its length limit.
#
#   tests/bench/export_decode_bench.sh        (BUILD_DIR=build THREADS=1 STEPS=800 SENTENCES=500)
#
# evaluate's time is its results.json "seconds": the split's decoding plus one
# teacher-forced pass for the loss, without start-up; the others' is their
# decoding calls only (models loaded before).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
threads=${THREADS:-1}; steps=${STEPS:-800}; sentences=${SENTENCES:-500}; batch_tokens=${BATCH_TOKENS:-4096}
py=$(bash "$src/scripts/setup_export.sh")
work=$(mktemp -d /tmp/bench-export.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$py" - "$sentences" <<'PY'
import random, sys
random.seed(11)
words = [f"w{i}" for i in range(20)]
dictionary = {w: f"t{(7 * i) % 20}" for i, w in enumerate(words)}
for split, n in (("train", 20000), ("valid", 100), ("test", int(sys.argv[1]))):
    with open(f"{split}.src", "w") as s, open(f"{split}.tgt", "w") as t:
        for _ in range(n):
            sentence = random.choices(words, k=random.randint(3, 12))
            s.write(" ".join(sentence) + "\n")
            t.write(" ".join(dictionary[w] for w in sentence) + "\n")
PY
"$build/bin/prepare_data" --task text --vocab word --joint-vocab --out data --train-src train.src \
  --train-tgt train.tgt --valid-src valid.src --valid-tgt valid.tgt --test-src test.src --test-tgt test.tgt \
  > prepare.log 2>&1 || { tail prepare.log; exit 1; }
"$build/bin/trainer" --data.dir data --run.out_dir runs --run.name bench --model.norm post --model.dropout 0 \
  --model.d_model 64 --model.heads 4 --model.d_ff 256 --model.encoder_layers 2 --model.decoder_layers 2 \
  --model.share_embeddings true --model.tie_output true --optim.lr 1.0 --optim.warmup_steps 100 \
  --optim.label_smoothing 0 \
  --data.batch_tokens 600 --train.max_steps "$steps" --train.save_every "$steps" --train.log_every 100 \
  --train.threads 1 > train.log 2>&1 || { tail train.log; exit 1; }
echo "Trained $steps steps: $(grep -o 'loss [0-9.]*' train.log | tail -1)."
for format in ct2 hf; do
  "$py" "$src/scripts/export_model.py" --run runs/bench --format $format --out $format \
    --evaluate "$build/bin/evaluate" > $format.log 2>&1 || { tail $format.log; exit 1; }
done

{
  for beam in 1 4; do
    "$build/bin/evaluate" --run runs/bench --threads "$threads" --batch-tokens "$batch_tokens" --beam $beam \
      --length-penalty 0 --out eval$beam > /dev/null 2> eval$beam.log || { tail eval$beam.log >&2; exit 1; }
    "$py" - eval$beam $beam <<'PY'
import json, sys
r = json.load(open(f"{sys.argv[1]}/results.json"))
hyps = open(f"{sys.argv[1]}/hypotheses.txt").read().split("\n")[:-1]
print(json.dumps({"system": f"evaluate, {'greedy' if sys.argv[2] == '1' else 'beam 4'}", "sentences": len(hyps),
                  "tokens": sum(len(h.split()) for h in hyps), "seconds": r["seconds"],
                  "exact_match": r["exact_match"]}))
PY
  done
  "$py" "$src/tests/bench/export_decode_bench.py" data ct2 hf "$threads" "$batch_tokens"
} > rows.jsonl

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the end, $(date '+%F %T')."
echo "Test split: $sentences sentences, $threads thread(s), batches of $batch_tokens tokens; ctranslate2 $("$py" -c 'import ctranslate2; print(ctranslate2.__version__)'), transformers $("$py" -c 'import transformers; print(transformers.__version__)'), torch $("$py" -c 'import torch; print(torch.__version__)')."
echo
"$py" - <<'PY'
import json
rows = [json.loads(l) for l in open("rows.jsonl")]
order = ["evaluate, greedy", "CTranslate2 float32, greedy", "CTranslate2 int8, greedy", "transformers greedy",
         "evaluate, beam 4", "CTranslate2 float32, beam 4", "CTranslate2 int8, beam 4", "transformers beam 4"]
rows.sort(key=lambda r: order.index(r["system"]))
base = {1: rows[0], 4: rows[4]}
print(f"evaluate's exact match: greedy {rows[0]['exact_match']:.3f}, beam 4 {rows[4]['exact_match']:.3f}.\n")
print("| decoder | sentences/s | target tokens/s | × evaluate |")
print("|---|---|---|---|")
for r in rows:
    ref = base[4 if "beam" in r["system"] else 1]
    print(f"| {r['system']} | {r['sentences'] / r['seconds']:.1f} | {r['tokens'] / r['seconds']:.0f} | "
          f"{ref['seconds'] / r['seconds']:.2f}× |")
PY
