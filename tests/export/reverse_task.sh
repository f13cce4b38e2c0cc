#!/usr/bin/env bash
# Export to CTranslate2 and transformers on the reverse task (word vocabulary,
# shared embeddings, tied output), checked with the released packages against
# the trained model (tests/export/parity.py): every test-split hypothesis of
# transformers and CTranslate2 equal to evaluate's, greedy (also with the length
# limit hit by every sentence); beam 4 without length penalty, transformers'
# equal, CTranslate2's equal or more likely (it stops by another rule); transformers'
# logits within 1e-4 of the model's; the tokenizer's ids the shards'. A pre-norm
# run goes to CTranslate2 exactly and is refused for transformers naming ct2; a
# classifier is refused for both.
# Usage: reverse_task.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch export-reverse
py=$(bash "$src/scripts/setup_export.sh" 2> setup-export.log) || fail "scripts/setup_export.sh" setup-export.log

"$build/bin/prepare_data" --task reverse --out data --seed 5 --train-size 3000 --valid-size 40 \
  --test-size 100 --min-len 2 --max-len 9 --symbols 13 > prepare.log 2>&1 || fail "prepare_data" prepare.log
# Trained until decisive (about 2/3 exact match post-norm, ~45 s here): near-ties would make any
# two implementations' argmax differ by float rounding alone.
trained=(--model.d_model 64 --model.d_ff 256 --data.batch_tokens 600 --model.dropout 0
         --optim.label_smoothing 0 --optim.lr 1.0 --optim.warmup_steps 100
         --train.max_steps 800 --train.save_every 800 --train.log_every 200)
export_to() {  # <run> <format> <out> -> exit status of the export
  "$py" "$src/scripts/export_model.py" --run "runs/$1" --format "$2" --out "$3" --evaluate "$build/bin/evaluate" \
    > "$3.log" 2>&1
}
# evaluate's hypotheses: greedy, greedy with every sentence at its length limit, beam 4 without penalty.
evaluate_three() {  # <run>
  local run=$1 options name
  for options in "greedy" "limit0 --max-extra-len 0" "beam0 --beam 4 --length-penalty 0"; do
    read -r name options <<<"$options"
    "$build/bin/evaluate" --run "runs/$run" --threads 1 --out "$run-eval/$name" $options > /dev/null \
      2> "$run-$name.log" || fail "evaluate $run $name" "$run-$name.log"
  done
}

trainer_run post 1 --model.norm post "${trained[@]}" || fail "training post-norm" post.log
evaluate_three post
export_to post hf hf || fail "export to transformers" hf.log
export_to post ct2 ct2 || fail "export to ctranslate2" ct2.log
"$py" "$src/tests/export/parity.py" --run runs/post --data data --hf hf --ct2 ct2 --evaluated post-eval \
  || fail "post-norm parity"

trainer_run pre 1 --model.norm pre "${trained[@]}" --train.max_steps 500 --train.save_every 500 \
  || fail "training pre-norm" pre.log
evaluate_three pre
export_to pre ct2 ct2-pre || fail "export pre-norm to ctranslate2" ct2-pre.log
"$py" "$src/tests/export/parity.py" --run runs/pre --data data --ct2 ct2-pre --evaluated pre-eval \
  --checks greedy,limit,beam || fail "pre-norm parity (ctranslate2)"
status=0; export_to pre hf hf-pre || status=$?
[ "$status" -eq 3 ] || fail "a pre-norm run to transformers: exit $status, not 3 (refused)" hf-pre.log
grep -q "post-norm only.*--format ct2" hf-pre.log || fail "the refusal does not name post-norm and ct2" hf-pre.log

"$build/bin/prepare_data" --task majority --out majority --seed 1 --train-size 200 --valid-size 20 \
  --symbols 6 --classes 3 --min-len 4 --max-len 10 > prepare-majority.log 2>&1 || fail "prepare majority" prepare-majority.log
trainer_run classify 1 --data.dir majority --train.max_steps 2 --train.save_every 2 || fail "training a classifier" classify.log
for format in ct2 hf; do
  status=0; export_to classify $format classify-$format || status=$?
  [ "$status" -eq 3 ] || fail "a classifier to $format: exit $status, not 3 (refused)" classify-$format.log
  grep -q "classifier head" classify-$format.log || fail "the refusal does not name the classifier head" classify-$format.log
done
echo "export reverse task: OK"
