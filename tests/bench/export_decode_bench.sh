#!/usr/bin/env bash
# Decoding speed of a trained model in this project's evaluate and in its
# exports, in one run and one table: sentences/s and target tokens/s on the same
# test split for evaluate (greedy, beam 4), CTranslate2 (fp32 and int8) and
# transformers (greedy, beam 4), all with THREADS threads (default 1) and batches
# of BATCH_TOKENS (evaluate's default, 4096). Beam 4 without length penalty in
# all three. The model, by SIZE, on a made-up word-for-word translation task (a
# word vocabulary, so that a hypothesis's tokens are its words):
#   small (default)  post-norm, d_model 64, 4 heads, d_ff 256, 2 + 2 layers, 20
#                    words; trained STEPS steps (800, one thread); SENTENCES 500
#   mid              d_model 256, 4 heads, d_ff 1024, 3 + 3 layers, 8 000 words
#   base             the paper's base: d_model 512, 8 heads, d_ff 2048, 6 + 6
#                    layers, 32 000 words
# (shared and tied embeddings; mid and base trained STEPS = 1 step at a
# learning rate of 1e-9, to export the model as initialised, which seldom
# emits eos — one step of the warmup's rate teaches base to emit eos first —:
# each hypothesis runs to its length limit, source length + EXTRA — 50 for
# small, evaluate's default, 10 for the others —; their test sentences all
# have 12 words, so that every decoder's limit is 22 tokens (CTranslate2's
# applies to a whole batch); SENTENCES 200 and 64).
# Exact match is printed with the table: an untrained model would decode to
# its length limit. HF=0 leaves transformers out (the default for mid and base).
#
#   tests/bench/export_decode_bench.sh        (BUILD_DIR=build SIZE=small THREADS=1 STEPS=800
#                                              SENTENCES=500 EXTRA=50 HF=1 REPEAT=1)
#
# Each system runs in a process of its own, whose peak RSS is printed beside
# its speed (evaluate's: the whole job, model and loss pass included); with
# REPEAT=n, n such processes, the systems taking turns, and the median time of each
# (on a shared machine one run's time can be off by 10%).
#
# evaluate's time is its results.json "decode_seconds": the split's decoding
# (encoder included) without start-up and without the teacher-forced pass for
# the loss, which is printed beside it ("seconds" holds both); the others' is
# their decoding calls only (models loaded before).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${BUILD_DIR:-$src/build}")
size=${SIZE:-small}
case $size in
  small) model=(--model.norm post --model.d_model 64 --model.heads 4 --model.d_ff 256
                --model.encoder_layers 2 --model.decoder_layers 2)
         words=20 defaults=(800 500 50 1 0 1.0) ;;
  mid)   model=(--model.d_model 256 --model.heads 4 --model.d_ff 1024 --model.encoder_layers 3
                --model.decoder_layers 3)
         words=8000 defaults=(1 200 10 0 12 1e-9) ;;
  base)  model=(--model.d_model 512 --model.heads 8 --model.d_ff 2048 --model.encoder_layers 6
                --model.decoder_layers 6)
         words=32000 defaults=(1 64 10 0 12 1e-9) ;;
  *) echo "SIZE must be small, mid or base" >&2; exit 2 ;;
esac
threads=${THREADS:-1}; steps=${STEPS:-${defaults[0]}}; sentences=${SENTENCES:-${defaults[1]}}
repeat=${REPEAT:-1}
extra=${EXTRA:-${defaults[2]}}; hf=${HF:-${defaults[3]}}; batch_tokens=${BATCH_TOKENS:-4096}
py=$(bash "$src/scripts/setup_export.sh")
work=$(mktemp -d /tmp/bench-export.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$py" - "$sentences" "$words" "${defaults[4]}" <<'PY'
import random, sys
random.seed(11)
n_words, test_len = int(sys.argv[2]), int(sys.argv[3])
words = [f"w{i}" for i in range(n_words)]
dictionary = {w: f"t{(7 * i) % n_words}" for i, w in enumerate(words)}
every_word = [words[i:i + 10] for i in range(0, n_words, 10)]  # each word in training once at least
for split, n in (("train", 20000), ("valid", 100), ("test", int(sys.argv[1]))):
    with open(f"{split}.src", "w") as s, open(f"{split}.tgt", "w") as t:
        for k in range(n):
            length = test_len if split == "test" and test_len else random.randint(3, 12)
            sentence = every_word[k] if split == "train" and k < len(every_word) else \
                random.choices(words, k=length)
            s.write(" ".join(sentence) + "\n")
            t.write(" ".join(dictionary[w] for w in sentence) + "\n")
PY
"$build/bin/prepare_data" --task text --vocab word --joint-vocab --out data --train-src train.src \
  --train-tgt train.tgt --valid-src valid.src --valid-tgt valid.tgt --test-src test.src --test-tgt test.tgt \
  > prepare.log 2>&1 || { tail prepare.log; exit 1; }
"$build/bin/trainer" --data.dir data --run.out_dir runs --run.name bench "${model[@]}" --model.dropout 0 \
  --model.share_embeddings true --model.tie_output true --optim.lr "${defaults[5]}" --optim.warmup_steps 100 \
  --optim.label_smoothing 0 \
  --data.batch_tokens 600 --train.max_steps "$steps" --train.save_every "$steps" --train.log_every 100 \
  --train.threads 1 > train.log 2>&1 || { tail train.log; exit 1; }
echo "Trained $steps steps: $(grep -o 'loss [0-9.]*' train.log | tail -1)."
formats=(ct2); [ "$hf" = 1 ] && formats+=(hf)
for format in "${formats[@]}"; do
  "$py" "$src/scripts/export_model.py" --run runs/bench --format $format --out $format \
    --evaluate "$build/bin/evaluate" > $format.log 2>&1 || { tail $format.log; exit 1; }
done

# peak <file> <command...>: the command's peak RSS (KiB, getrusage of the child) into <file>.
peak() {
  "$py" -c 'import resource, subprocess, sys; code = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)' "$@"
}

# One process per system and run, so that each one's peak RSS is its own.
systems=(ct2-float32-1 ct2-int8-1 ct2-float32-4 ct2-int8-4); [ "$hf" = 1 ] && systems+=(hf-1 hf-4)
for run in $(seq "$repeat"); do
  for beam in 1 4; do
    peak eval$beam-$run.peak "$build/bin/evaluate" --run runs/bench --threads "$threads" --batch-tokens "$batch_tokens" --beam $beam \
      --length-penalty 0 --max-extra-len "$extra" --out eval$beam-$run > /dev/null 2> eval$beam.log || { tail eval$beam.log >&2; exit 1; }
    "$py" - eval$beam-$run $beam <<'PY' >> runs.jsonl
import json, sys
r = json.load(open(f"{sys.argv[1]}/results.json"))
peak_mib = int(open(f"{sys.argv[1]}.peak").read()) / 1024
hyps = open(f"{sys.argv[1]}/hypotheses.txt").read().split("\n")[:-1]
print(json.dumps({"system": f"evaluate, {'greedy' if sys.argv[2] == '1' else 'beam 4'}", "sentences": len(hyps),
                  "tokens": sum(len(h.split()) for h in hyps), "seconds": r["decode_seconds"],
                  "with_loss_seconds": r["seconds"], "peak_mib": peak_mib,
                  "exact_match": r["exact_match"]}))
PY
  done
  for system in "${systems[@]}"; do
    peak $system.peak "$py" "$src/tests/bench/export_decode_bench.py" data ct2 \
      "$([ "$hf" = 1 ] && echo hf || echo -)" "$threads" "$batch_tokens" "$extra" $system > $system.row
    "$py" -c 'import json, sys; r = json.loads(open(sys.argv[1]).read())
r["peak_mib"] = int(open(sys.argv[2]).read()) / 1024; print(json.dumps(r))' $system.row $system.peak >> runs.jsonl
  done
done
# Each system's median run (by time; the upper median of an even count).
"$py" - > rows.jsonl <<'PY'
import json
runs = {}
for line in open("runs.jsonl"):
    r = json.loads(line)
    runs.setdefault(r["system"], []).append(r)
for system, rs in runs.items():
    rs.sort(key=lambda r: r["seconds"])
    median = dict(rs[len(rs) // 2])
    median["runs"] = [round(r["seconds"], 3) for r in rs]
    print(json.dumps(median))
PY

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the end, $(date '+%F %T')."
echo "Model $size; test split: $sentences sentences, hypotheses up to source length + $extra, $threads thread(s), batches of $batch_tokens tokens, median of $repeat run(s); ctranslate2 $("$py" -c 'import ctranslate2; print(ctranslate2.__version__)'), transformers $("$py" -c 'import transformers; print(transformers.__version__)'), torch $("$py" -c 'import torch; print(torch.__version__)')."
echo
"$py" - <<'PY'
import json
rows = [json.loads(l) for l in open("rows.jsonl")]
order = ["evaluate, greedy", "CTranslate2 float32, greedy", "CTranslate2 int8, greedy", "transformers greedy",
         "evaluate, beam 4", "CTranslate2 float32, beam 4", "CTranslate2 int8, beam 4", "transformers beam 4"]
rows.sort(key=lambda r: order.index(r["system"]))
base = {k: next(r for r in rows if r["system"] == f"evaluate, {name}") for k, name in ((1, "greedy"), (4, "beam 4"))}
print(f"evaluate's exact match: greedy {base[1]['exact_match']:.3f}, beam 4 {base[4]['exact_match']:.3f}; "
      f"its whole scoring with the loss's pass: greedy {base[1]['with_loss_seconds']:.2f} s, "
      f"beam 4 {base[4]['with_loss_seconds']:.2f} s (decoding alone: {base[1]['seconds']:.2f} s, "
      f"{base[4]['seconds']:.2f} s).\n")
print("| decoder | sentences/s | target tokens/s | × evaluate | peak RSS MiB (its process) | seconds of each run |")
print("|---|---|---|---|---|---|")
for r in rows:
    ref = base[4 if "beam" in r["system"] else 1]
    print(f"| {r['system']} | {r['sentences'] / r['seconds']:.1f} | {r['tokens'] / r['seconds']:.0f} | "
          f"{ref['seconds'] / r['seconds']:.2f}× | {r['peak_mib']:.0f} | {', '.join(map(str, r['runs']))} |")
PY
