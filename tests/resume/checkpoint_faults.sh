#!/usr/bin/env bash
# Bad checkpoints and bad numbers (1 rank, tiny model):
#   - a truncated or byte-flipped newest checkpoint, named explicitly, is an
#     error; --resume auto skips it with a warning and takes the previous one;
#   - an unwritable checkpoint directory is a clear error, the earlier
#     checkpoint stays intact;
#   - a checkpoint of another model shape is refused naming the field and the
#     way on, leaving config.toml as it was; a changed optimizer setting is
#     allowed with a warning;
#   - training from an older checkpoint or afresh moves the later ones aside;
#   - non-finite steps are skipped with a warning, and K in a row end the run.
# Usage: checkpoint_faults.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch resume-faults
prepare_tiny data
opts=(--train.max_steps 6 --train.save_every 2)
expect_failure() {  # <name> <grep pattern> [trainer options...]: non-zero exit, message in the log
  local name=$1 pattern=$2; shift 2
  if trainer_run "$name" 1 "$@"; then fail "$name: the trainer succeeded" "$name.log"; fi
  grep -q -- "$pattern" "$name.log" || fail "$name: no message matching '$pattern'" "$name.log"
}

# ---- corrupted newest checkpoint -> the previous one ---------------------
for damage in truncate flip; do
  trainer_run "$damage" 1 "${opts[@]}" || fail "$damage: first run" "$damage.log"
  file=runs/$damage/checkpoints/step_00000006/model.pt
  if [ "$damage" = truncate ]; then
    truncate -s -100 "$file"
  else  # one byte in the middle, inverted
    offset=$(( $(stat -c %s "$file") / 2 ))
    byte=$(od -An -tu1 -j "$offset" -N1 "$file" | tr -d ' ')
    printf "$(printf '\\%03o' $(( 255 - byte )))" |
      dd of="$file" bs=1 seek="$offset" conv=notrunc status=none
  fi
  expect_failure "$damage" "checkpoint .*step_00000006 fails verification: .*model.pt does not match" "${opts[@]}" \
    --resume "runs/$damage/checkpoints/step_00000006"
  trainer_run "$damage" 1 "${opts[@]}" --train.max_steps 8 --resume auto || fail "$damage: resume" "$damage.log"
  grep -q "skipping checkpoint .*step_00000006: .*model.pt does not match" "$damage.log" \
    || fail "$damage: no warning about the damaged checkpoint" "$damage.log"
  grep -q "resuming from .*step_00000004 (step 4" "$damage.log" \
    || fail "$damage: did not resume from the previous checkpoint" "$damage.log"
done

# ---- unwritable checkpoint directory ---------------------------------------
trainer_run readonly 1 "${opts[@]}" --train.max_steps 2 || fail "readonly: first run" readonly.log
sums_before=$(cat runs/readonly/checkpoints/step_00000002/SHA256SUMS)
chmod 555 runs/readonly/checkpoints
as_user=()
if [ "$(id -u)" = 0 ]; then  # root ignores permissions: run as nobody
  chown -R 65534:65534 "$work"; chown 0:0 runs/readonly/checkpoints
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if "${as_user[@]}" "$build/bin/trainer" "${TINY[@]}" --run.name readonly "${opts[@]}" \
    --resume auto > readonly.log 2>&1; then
  fail "readonly: the trainer succeeded" readonly.log
fi
grep -q "saving the checkpoint of step 4 in .*checkpoints failed (earlier checkpoints are untouched)" \
  readonly.log || fail "readonly: no clear error" readonly.log
chmod 755 runs/readonly/checkpoints
(cd runs/readonly/checkpoints/step_00000002 && sha256sum --quiet -c SHA256SUMS) \
  || fail "readonly: the earlier checkpoint was damaged"
[ "$sums_before" = "$(cat runs/readonly/checkpoints/step_00000002/SHA256SUMS)" ] \
  || fail "readonly: the earlier checkpoint changed"

# ---- another model / changed optimizer ------------------------------------
config_before=$(cat runs/truncate/config.toml)
expect_failure truncate "model differs from the config: model.d_ff = 64 in the checkpoint, 128 now" \
  "${opts[@]}" --model.d_ff 128 --train.max_steps 10
grep -q -- "another --run.name" truncate.log || fail "the refusal does not say the way on" truncate.log
[ "$config_before" = "$(cat runs/truncate/config.toml)" ] \
  || fail "a refused resume rewrote config.toml" runs/truncate/config.toml
trainer_run truncate 1 "${opts[@]}" --optim.lr 0.25 --train.max_steps 10 || fail "lr change" truncate.log
grep -q "resuming with optim.lr = 0.25 (the checkpoint was trained with 0.5)" truncate.log \
  || fail "no warning about the changed learning rate" truncate.log

# ---- training from an older checkpoint, or afresh: later ones set aside ------
# (moved, not deleted; else pruning, `latest` and a requeue's --resume latest
# would mix two histories)
steps() { (cd "$1" && ls -d step_* | xargs); }
trainer_run older 1 "${opts[@]}" || fail "older: first run" older.log
trainer_run older 1 "${opts[@]}" --resume runs/older/checkpoints/step_00000002 --train.max_steps 4 \
  || fail "older: from step 2" older.log
[ "$(steps runs/older/checkpoints)" = "step_00000002 step_00000004" ] \
  || fail "older: checkpoints $(steps runs/older/checkpoints)"
[ "$(steps runs/older/superseded/*)" = "step_00000004 step_00000006" ] \
  || fail "older: set aside $(steps runs/older/superseded/*)" older.log
grep -q "training from step 2: the run's checkpoints of later steps moved to .*runs/older/superseded/" \
  older.log || fail "older: the move is not reported" older.log
[ "$(readlink runs/older/checkpoints/latest)" = step_00000004 ] || fail "older: latest"
trainer_run older 1 "${opts[@]}" --train.max_steps 6 || fail "older: resume latest" older.log
grep -q "resuming from .*step_00000004 (step 4" older.log || fail "older: not from the new step 4" older.log
sleep 1  # another second: another superseded/<time> directory
trainer_run older 1 "${opts[@]}" --resume none --train.max_steps 2 || fail "older: afresh" older.log
[ "$(steps runs/older/checkpoints)" = step_00000002 ] || fail "older: afresh kept $(steps runs/older/checkpoints)"
[ "$(ls runs/older/superseded | wc -l)" -eq 2 ] || fail "older: a fresh start set nothing aside"

# ---- non-finite steps --------------------------------------------------------
# A constant learning rate of 1e30 sends the weights to infinity after one update.
expect_failure nan "3 non-finite steps in a row" --train.max_steps 20 --train.save_every 0 \
  --optim.schedule constant --optim.lr 1e30 --train.max_nonfinite_steps 3
[ "$(grep -c "non-finite loss .* update skipped" nan.log)" = 2 ] || fail "expected 2 skip warnings" nan.log

# ---- a diverged run saves nothing ------------------------------------------
# Two sane steps, then a resume at a learning rate of 1e30: Adam's first
# update sends the weights to ~1e30 (finite, so the loss guard lets it pass).
# The next save is refused, naming a parameter; no checkpoint of the diverged
# weights exists and latest stays at step 2, from which a resume goes on.
trainer_run diverged 1 "${opts[@]}" --train.max_steps 2 || fail "diverged: first run" diverged.log
expect_failure diverged "step 3: the run diverged: parameter .* holds exploded weights" \
  "${opts[@]}" --train.max_steps 6 --train.save_every 1 --optim.schedule constant --optim.lr 1e30 \
  --train.max_nonfinite_steps 100
grep -q "the run's latest checkpoint stays .*step_00000002" diverged.log || fail "diverged: message" diverged.log
[ "$(steps runs/diverged/checkpoints)" = step_00000002 ] || fail "diverged: saved $(steps runs/diverged/checkpoints)"
[ "$(readlink runs/diverged/checkpoints/latest)" = step_00000002 ] || fail "diverged: latest moved"
trainer_run diverged 1 "${opts[@]}" --train.max_steps 4 || fail "diverged: resume from step 2" diverged.log
echo "checkpoint faults: OK"
