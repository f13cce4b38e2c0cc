#!/usr/bin/env bash
# Export to CTranslate2 and transformers on a SentencePiece text task (a joint
# BPE vocabulary; separate source and target embeddings and an untied output
# layer, the other layout than reverse_task.sh's): a made-up language translated
# word by word through a fixed dictionary. The exported tokenizers
# (MarianTokenizer; SentencePiece beside the CTranslate2 model) turn the test
# split's source text into the shards' ids, and every hypothesis equals
# evaluate's (tests/export/parity.py: greedy, length limits, beam 4 without length
# penalty, where CTranslate2's may be more likely; transformers' logits within 1e-4).
# Usage: sentencepiece_task.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch export-spm
py=$(bash "$src/scripts/setup_export.sh" 2> setup-export.log) || fail "scripts/setup_export.sh" setup-export.log

"$py" - <<'PY'
import random
random.seed(7)
words = "sun moon star river stone bird tree wind rain snow fire leaf cloud hill sea road".split()
dictionary = dict(zip(words, "sol luna stella fiume pietra uccello albero vento pioggia neve fuoco "
                             "foglia nuvola colle mare strada".split()))
for split, n in (("train", 3000), ("valid", 40), ("test", 100)):
    with open(f"{split}.src", "w") as s, open(f"{split}.tgt", "w") as t:
        for _ in range(n):
            sentence = [random.choice(words) for _ in range(random.randint(1, 6))]
            s.write(" ".join(sentence) + "\n")
            t.write(" ".join(dictionary[w] for w in sentence) + "\n")
PY
"$build/bin/prepare_data" --task text --vocab spm --joint-vocab --spm-vocab-size 120 --out data \
  --train-src train.src --train-tgt train.tgt --valid-src valid.src --valid-tgt valid.tgt \
  --test-src test.src --test-tgt test.tgt > prepare.log 2>&1 || fail "prepare_data --vocab spm" prepare.log
trainer_run spm 1 --model.norm post --model.share_embeddings false --model.tie_output false \
  --model.d_model 64 --model.d_ff 256 --data.batch_tokens 600 --model.dropout 0 \
  --optim.label_smoothing 0 --optim.lr 1.0 --optim.warmup_steps 100 \
  --train.max_steps 500 --train.save_every 500 --train.log_every 100 || fail "training" spm.log
for options in "greedy" "limit0 --max-extra-len 0" "beam0 --beam 4 --length-penalty 0"; do
  read -r name options <<<"$options"
  "$build/bin/evaluate" --run runs/spm --threads 1 --out "eval/$name" $options > /dev/null \
    2> "$name.log" || fail "evaluate $name" "$name.log"
done
for format in hf ct2; do
  "$py" "$src/scripts/export_model.py" --run runs/spm --format $format --out $format \
    --evaluate "$build/bin/evaluate" > $format.log 2>&1 || fail "export to $format" $format.log
done
"$py" "$src/tests/export/parity.py" --run runs/spm --data data --hf hf --ct2 ct2 --evaluated eval \
  || fail "parity"
echo "export sentencepiece task: OK"
