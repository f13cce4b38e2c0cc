#!/usr/bin/env bash
# Bad input and faults a user meets on a shared cluster, tried on the three
# programs of a build: prints one Markdown row per case (what, the command,
# exit status, the first line of the message). For reading two builds side
# by side (before and after a change to the messages or exit codes):
#   scripts/fault_table.sh build > new.md ; scripts/fault_table.sh /tmp/old/build > old.md
# Needs root for the full-disk and read-only cases (small tmpfs mounts), and
# a C compiler for the file system that refuses locks and fsync
# (tests/resume/refusing_file_system.c). Works in a scratch directory.
set -uo pipefail
build=$(realpath "${1:-build}")
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/fault-table.XXXXXX)
cleanup() {
  for m in full readonly; do mountpoint -q "$work/$m" && umount "$work/$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
mpirun=(bash "$src/scripts/mpirun.sh")
trainer=("$build/bin/trainer" --train.threads 1)
evaluate=("$build/bin/evaluate" --threads 1)
prepare=("$build/bin/prepare_data")
tiny=(--data.dir data --data.batch_tokens 300 --model.d_model 32 --model.heads 4 --model.d_ff 64
      --model.encoder_layers 1 --model.decoder_layers 1 --optim.warmup_steps 4 --train.log_every 5
      --run.out_dir runs)

# The message's first line: the first error, else the first line saying what
# was refused or dropped, else the first line but the thread-count warning;
# without the log prefix ([time] [rank 0] [error]).
first_line() {
  local line
  line=$(grep -m1 '\[error\]' "$1" ||
         grep -m1 -E 'dropped|excludes|requires|not expected|missing|exist|range|must' "$1" ||
         grep -m1 -v 'torch thread(s) per rank' "$1")
  line=$(sed -E 's/^\[[0-9:]+\] \[rank [0-9]+\] \[[a-z]+\] //' <<< "$line")
  line=${line//|/\\|}
  printf '%s' "${line:0:200}"
}
row() {  # <what> <command...>: runs it, prints the row
  local what=$1; shift
  local status=0
  "$@" > out.log 2>&1 < /dev/null || status=$?
  local shown="${*//$build\/bin\//}"
  shown=${shown//$work\//}
  shown=${shown//"${tiny[*]}"/<tiny model>}
  shown=${shown//" --train.threads 1"/}
  shown=${shown//" --threads 1"/}
  shown=${shown//$'\n'/\\n}  # a newline in an argument, as the shell would escape it
  printf '| %s | `%s` | %s | %s |\n' "$what" "${shown:0:110}" "$status" "$(first_line out.log)"
}

# <what> <n> <command...>: n copies at once (a Slurm array, a job submitted
# twice); the exit column lists their codes, the message is the first failure's.
at_once() {
  local what=$1 n=$2; shift 2
  local pids=() codes=() i
  rm -f out.log
  for i in $(seq "$n"); do "$@" > "at_once$i.log" 2>&1 < /dev/null & pids+=($!); done
  for i in $(seq "$n"); do
    wait "${pids[i - 1]}"; codes+=($?)
    [ "${codes[i - 1]}" = 0 ] || [ -s out.log ] || cp "at_once$i.log" out.log
  done
  [ -s out.log ] || cp at_once1.log out.log
  local shown="${*//$build\/bin\//}"
  shown=${shown//"${tiny[*]}"/<tiny model>}
  printf '| %s | `%s` (%s at once) | %s | %s |\n' "$what" "${shown:0:90}" "$n" "${codes[*]}" \
    "$(first_line out.log)"
  rm -f out.log
}
# <what> <n> <command...>: up to n tries in a row; the first failure's row, or the last's.
tries() {
  local what=$1 n=$2 i; shift 2
  for i in $(seq "$n"); do
    row "$what" "$@" > row.md
    grep -q '| 0 |' row.md || break
  done
  cat row.md
}

"${prepare[@]}" --task reverse --out data --seed 3 --train-size 300 --valid-size 20 --test-size 20 \
  --min-len 2 --max-len 8 --symbols 11 > /dev/null 2>&1
"${prepare[@]}" --task copy --out other --seed 3 --train-size 50 --valid-size 10 --test-size 10 \
  > /dev/null 2>&1
"${trainer[@]}" "${tiny[@]}" --run.name ok --train.max_steps 20 --train.save_every 10 \
  > /dev/null 2>&1
printf '[model]\nd_modl = 64\n' > typo.toml
printf 'a b\n' > one.src
printf 'ein Haus\n%s\n' "$(head -c 5000000 /dev/zero | tr '\0' x)" > long.de
printf 'a house\nx\n' > long.en
printf 's1 s2\n\xff s3\n' > latin1.txt
: > empty.txt
mkdir -p full readonly && mount -t tmpfs -o size=300k tmpfs full && mount -t tmpfs -o ro tmpfs readonly
head -c 290000 /dev/zero > full/filler 2>/dev/null

echo "| case | command | exit | first line of the message |"
echo "|---|---|---|---|"
row "unknown option" "${trainer[@]}" --no-such-option 1
row "option without its value" "${trainer[@]}" --config
row "malformed number" "${trainer[@]}" --train.max_steps abc
row "config file missing" "${trainer[@]}" --config nope.toml
row "unknown key in the config file" "${trainer[@]}" --config typo.toml
row "inconsistent model" "${trainer[@]}" "${tiny[@]}" --model.heads 5
row "value not among the allowed" "${trainer[@]}" "${tiny[@]}" --model.norm middle
row "dataset directory missing" "${trainer[@]}" "${tiny[@]}" --data.dir nowhere
row "resume: another model shape" "${trainer[@]}" "${tiny[@]}" --run.name ok --model.d_ff 128
row "resume: another dataset" "${trainer[@]}" "${tiny[@]}" --run.name ok --data.dir other
row "resume from a checkpoint that is not there" "${trainer[@]}" "${tiny[@]}" --run.name x \
  --resume runs/ok/checkpoints/step_00000099
row "resume from a file" "${trainer[@]}" "${tiny[@]}" --run.name x \
  --resume runs/ok/checkpoints/step_00000010/model.pt
row "resume best, no validation" "${trainer[@]}" "${tiny[@]}" --run.name x --resume best
row "run directory on a full disk" "${trainer[@]}" "${tiny[@]}" --run.out_dir full/runs
row "run directory not writable" "${trainer[@]}" "${tiny[@]}" --run.out_dir readonly/runs
"${trainer[@]}" "${tiny[@]}" --run.name busy --train.max_steps 100000 > busy.log 2>&1 &
busy=$!
for _ in $(seq 100); do [ -s runs/busy/config.toml ] && break; sleep 0.1; done
row "a second trainer on a run in training" "${trainer[@]}" "${tiny[@]}" --run.name busy
kill -KILL $busy; wait $busy 2>/dev/null
row "start-up timeout not a number" env TRAINER_STARTUP_TIMEOUT_S=abc "${trainer[@]}" "${tiny[@]}" \
  --run.name x
row "learning rate not finite" "${trainer[@]}" "${tiny[@]}" --run.name x --optim.lr inf
"${trainer[@]}" "${tiny[@]}" --run.name diverged --train.max_steps 2 > /dev/null 2>&1
row "a run that diverges (lr 1e30)" "${trainer[@]}" "${tiny[@]}" --run.name diverged \
  --train.max_steps 6 --train.save_every 1 --optim.schedule constant --optim.lr 1e30 \
  --train.max_nonfinite_steps 100
mkdir -p deep/inner && ln -sfn deep/inner through
(cd through && row "'..' past a symbolic link" "${trainer[@]}" "${tiny[@]}" \
  --data.dir ../data --run.out_dir "$work/runs")
cp -r data twice && python3 -c '
import json; p = "twice/manifest.json"; m = json.load(open(p))
m["splits"]["train"]["shards"].append(dict(m["splits"]["train"]["shards"][0]))
json.dump(m, open(p, "w"))'
row "a shard listed twice in the manifest" "${trainer[@]}" "${tiny[@]}" --run.name x --data.dir twice
cp -r runs/ok runs/unfinished && rm -f runs/unfinished/finished.json  # watched until killed
"${evaluate[@]}" --run runs/unfinished --split valid --watch --poll-s 60 > watcher.log 2>&1 &
watcher=$!
for _ in $(seq 100); do [ -s runs/unfinished/eval/.watch-valid.lock ] && break; sleep 0.1; done
row "a second evaluate --watch of one run and split" "${evaluate[@]}" --run runs/unfinished \
  --split valid --watch
kill $watcher; wait $watcher 2>/dev/null
printf 's1 s2\r\ns3\r\n' > crlf.txt
row "evaluate: translate CRLF text (as LF)" "${evaluate[@]}" --run runs/ok --translate crlf.txt
row "evaluate: no run there" "${evaluate[@]}" --run data
row "evaluate: directory missing" "${evaluate[@]}" --run nowhere
row "evaluate: beam 0" "${evaluate[@]}" --run runs/ok --beam 0
row "evaluate: malformed number" "${evaluate[@]}" --run runs/ok --threads abc
row "evaluate: split missing" "${evaluate[@]}" --run runs/ok --split nope
row "evaluate: checkpoint is a file" "${evaluate[@]}" --run runs/ok \
  --checkpoint runs/ok/checkpoints/step_00000010/model.pt
row "evaluate: best without validation" "${evaluate[@]}" --run runs/ok --checkpoint best
row "evaluate: average more than exist" "${evaluate[@]}" --run runs/ok --average-last 9
row "evaluate: another dataset" "${evaluate[@]}" --run runs/ok --data other --split test
row "evaluate: --translate with --watch" "${evaluate[@]}" --run runs/ok --translate one.src --watch
row "evaluate: --translate with --split" "${evaluate[@]}" --run runs/ok --translate one.src \
  --split test
row "evaluate: --watch with --checkpoint" "${evaluate[@]}" --run runs/ok --watch --checkpoint best
row "evaluate: --poll-s without --watch" "${evaluate[@]}" --run runs/ok --poll-s 5
row "evaluate: translate invalid UTF-8" "${evaluate[@]}" --run runs/ok --translate latin1.txt
row "evaluate: translate an empty file" "${evaluate[@]}" --run runs/ok --translate empty.txt
row "evaluate: results on a full disk" "${evaluate[@]}" --run runs/ok --split test --out full/eval
mkdir -p elsewhere
(cd elsewhere && row "evaluate from another directory" "${evaluate[@]}" --run "$work/runs/ok" \
  --split test --out "$work/elsewhere/eval")
cp -r data cut && sed -i '$d' cut/vocab.txt
row "evaluate: the vocabulary cut short" "${evaluate[@]}" --run runs/ok --data cut --split test
sed -i 's|^dir = .*|dir = "moved/data"|' runs/ok/config.toml
row "evaluate: the run's dataset moved" "${evaluate[@]}" --run runs/ok --split test
row "prepare: unknown option" "${prepare[@]}" --task copy --out d1 --no-such 1
row "prepare: option of another task" "${prepare[@]}" --task copy --out d2 --train-src one.src
row "prepare: source without target" "${prepare[@]}" --task text --out d3 --train-src one.src
row "prepare: no training file" "${prepare[@]}" --task classify --out d4 --valid-tsv one.src
row "prepare: negative size" "${prepare[@]}" --task copy --out d5 --shard-mb -1
row "prepare: input file missing" "${prepare[@]}" --task text --out d6 --train-src nope.de \
  --train-tgt long.en
row "prepare: line counts differ" "${prepare[@]}" --task text --out d7 --train-src one.src \
  --train-tgt long.en
gzip -kf long.en
row "prepare: gzip input" "${prepare[@]}" --task text --out d9 --train-src long.en.gz \
  --train-tgt long.en
row "prepare: output exists" "${prepare[@]}" --task copy --out data
row "prepare: a 5 MB line of one word" "${prepare[@]}" --task text --vocab char --out d8 \
  --train-src long.de --train-tgt long.en
row "prepare: output on a full disk" "${prepare[@]}" --task copy --out full/data --train-size 5000

# ---- concurrent readers and writers of one run or directory ----
"${trainer[@]}" "${tiny[@]}" --run.name pruning --train.max_steps 5000 --train.save_every 1 \
  --train.keep_last 2 > pruning.log 2>&1 &
pruning=$!
for _ in $(seq 100); do [ -e runs/pruning/checkpoints/latest ] && break; sleep 0.1; done
tries "evaluate: average the last 2 while training prunes to 2" 8 "${evaluate[@]}" \
  --run runs/pruning --split valid --average-last 2
tries "evaluate: latest while training prunes" 8 "${evaluate[@]}" --run runs/pruning --split valid
kill -TERM $pruning; wait $pruning 2>/dev/null
ln -s runs runs-link
"${trainer[@]}" "${tiny[@]}" --run.name linked --train.max_steps 100000 > linked.log 2>&1 &
linked=$!
for _ in $(seq 100); do [ -s runs/linked/config.toml ] && break; sleep 0.1; done
row "a second trainer on a run, through a linked run.out_dir" "${trainer[@]}" "${tiny[@]}" \
  --run.name linked --run.out_dir runs-link
kill -KILL $linked; wait $linked 2>/dev/null
at_once "a Slurm array training one run.name" 3 "${trainer[@]}" "${tiny[@]}" --run.name array \
  --train.max_steps 30
at_once "a Slurm array preparing one --out" 3 "${prepare[@]}" --task copy --out same \
  --train-size 100000
at_once "a Slurm array evaluating into one --out" 3 "${evaluate[@]}" --run runs/ok --data data \
  --split test --out same-eval
row "evaluate --watch of a run not yet started (5 s)" timeout 5 "${evaluate[@]}" --run runs/later \
  --split valid --watch
"${prepare[@]}" --task copy --out copy3 --seed 3 --train-size 300 --valid-size 20 > /dev/null 2>&1
"${mpirun[@]}" -np 3 "${prepare[@]}" --task copy --out copy3r --seed 3 --train-size 300 \
  --valid-size 20 > /dev/null 2>&1
"${trainer[@]}" "${tiny[@]}" --data.dir copy3 --run.name ranks3 --train.max_steps 4 > /dev/null 2>&1
row "resume on the same dataset prepared on 3 ranks" "${trainer[@]}" "${tiny[@]}" \
  --data.dir copy3r --run.name ranks3 --train.max_steps 6

# ---- clocks and time limits ----
row "watchdog of 1 ms" "${trainer[@]}" "${tiny[@]}" --run.name x --train.watchdog_s 0.001
row "start-up timeout of 1e300 s" env TRAINER_STARTUP_TIMEOUT_S=1e300 "${trainer[@]}" "${tiny[@]}" \
  --run.name clock1 --train.max_steps 3
row "a checkpoint every 1e-9 minutes" "${trainer[@]}" "${tiny[@]}" --run.name clock2 \
  --train.max_steps 5 --train.save_every 0 --train.save_every_minutes 1e-9
cp -r runs/ok runs/skewed
touch -d 2099-01-01 runs/skewed/checkpoints/step_00000010/*
touch -d 1971-01-01 runs/skewed/checkpoints/step_00000020/*
row "resume: checkpoints' mtimes from a skewed clock" "${trainer[@]}" "${tiny[@]}" --run.name skewed \
  --train.max_steps 25

# ---- huge vocabularies and sequence lengths ----
python3 -c '
import random
random.seed(0)
with open("wide.src", "w") as s, open("wide.tgt", "w") as t:
    for _ in range(20000):
        s.write(" ".join("w%d" % random.randrange(10**7) for _ in range(15)) + "\n")
        t.write(" ".join("v%d" % random.randrange(10**7) for _ in range(15)) + "\n")'
row "prepare: a 300 k-word vocabulary" "${prepare[@]}" --task text --vocab word --out wide \
  --train-src wide.src --train-tgt wide.tgt
row "train on a 300 k-word vocabulary" "${trainer[@]}" "${tiny[@]}" --data.dir wide --run.name wide \
  --train.max_steps 2
row "prepare: SentencePiece vocabulary beyond the corpus (60 s)" timeout 60 "${prepare[@]}" \
  --task text --vocab spm --spm-vocab-size 1000000 --out spm-wide --train-src wide.src \
  --train-tgt wide.tgt
row "a model of d_model 2^20" "${trainer[@]}" "${tiny[@]}" --run.name x --model.d_model 1048576 \
  --model.heads 1 --model.d_ff 1048576
row "positions for 1e12 tokens" "${trainer[@]}" "${tiny[@]}" --run.name x \
  --model.max_positions 1000000000000
row "a batch smaller than one example" "${trainer[@]}" "${tiny[@]}" --run.name x --data.batch_tokens 3

# ---- a file system that refuses POSIX locks or fsync (an LD_PRELOAD'ed library) ----
cc -shared -fPIC -O1 -o refuse.so "$src/tests/resume/refusing_file_system.c" -ldl
refusing=(env LD_PRELOAD="$work/refuse.so")
row "dataset and run without POSIX locks" "${refusing[@]}" NOLOCK=1 "${trainer[@]}" "${tiny[@]}" \
  --run.name nolock --train.max_steps 3
row "evaluate --watch without POSIX locks" "${refusing[@]}" NOLOCK=1 "${evaluate[@]}" --run runs/ok \
  --data data --split valid --watch
row "prepare: fsync not offered (EINVAL)" "${refusing[@]}" FSYNC_ERRNO=22 "${prepare[@]}" \
  --task copy --out nosync --train-size 100
row "train: fsync not offered (EINVAL)" "${refusing[@]}" FSYNC_ERRNO=22 "${trainer[@]}" "${tiny[@]}" \
  --run.name nosync --train.max_steps 6 --train.save_every 3
row "train: fsync fails (EIO)" "${refusing[@]}" FSYNC_ERRNO=5 "${trainer[@]}" "${tiny[@]}" \
  --run.name eio --train.max_steps 6

# ---- the remedies the messages name, and what is written and read back ----
row "prepare --upgrade of a dataset (relative DIR)" "${prepare[@]}" --upgrade data
row "prepare --upgrade with another option" "${prepare[@]}" --upgrade data --force
row "a dataset prepared under umask 022: its mode" bash -c "umask 022 && ${prepare[*]} --task copy \
  --out shared --train-size 50 > /dev/null && stat -c 'mode %a' shared"
cp -r data looped && ln -sf manifest.json looped/manifest.json
row "a manifest that links to itself" "${prepare[@]}" --upgrade looped
row "train: run.out_dir holding a newline" "${trainer[@]}" "${tiny[@]}" --run.out_dir $'runs\nnext' \
  --run.name nl --train.max_steps 4 --train.save_every 2
row "resume that run" "${trainer[@]}" "${tiny[@]}" --run.out_dir $'runs\nnext' --run.name nl \
  --train.max_steps 6 --train.save_every 2
row "evaluate that run" "${evaluate[@]}" --run $'runs\nnext/nl' --split valid
row "evaluate --bleu-tokenize intl (sacreBLEU's, not here)" "${evaluate[@]}" --run runs/ok \
  --split test --bleu-tokenize intl
printf '[optim]\nschedule = 1\n' > choice.toml
row "a choice given as a number in the config" "${trainer[@]}" "${tiny[@]}" --config choice.toml \
  --run.name x
row "train.precision = bf16 (CPU bfloat16 instructions: $(grep -qwE 'avx512_bf16|amx_bf16' \
  /proc/cpuinfo && echo yes || echo no))" "${trainer[@]}" "${tiny[@]}" --run.name bf16 \
  --train.precision bf16 --train.max_steps 2
cp -r runs/ok runs/rebatched
row "resume with another data.batch_tokens" "${trainer[@]}" "${tiny[@]}" --run.name rebatched \
  --data.batch_tokens 120 --data.max_len 60 --train.max_steps 22
cp -r data swapped && mv swapped/valid.index swapped/x && mv swapped/test.index swapped/valid.index &&
  mv swapped/x swapped/test.index
row "evaluate: valid.index and test.index exchanged" "${evaluate[@]}" --run runs/ok --data swapped \
  --split valid
"${prepare[@]}" --task reverse --out twin --seed 4 --train-size 300 --valid-size 20 --test-size 20 \
  --min-len 2 --max-len 8 --symbols 11 > /dev/null 2>&1
cp -r data foreign && cp twin/train.index foreign/train.index
row "train: a train.index of another dataset of the same size" "${trainer[@]}" "${tiny[@]}" \
  --data.dir foreign --run.name x --train.max_steps 2
cp -r data added && cp twin/train-00000.h5 added/train-00001.h5 && python3 - added <<'PY'
import json, sys, hashlib
d = sys.argv[1]; m = json.load(open(f"{d}/manifest.json"))
shard = dict(m["splits"]["train"]["shards"][0], file="train-00001.h5",
             sha256=hashlib.sha256(open(f"{d}/train-00001.h5", "rb").read()).hexdigest())
m["splits"]["train"]["shards"].append(shard); json.dump(m, open(f"{d}/manifest.json", "w"))
PY
row "train: a shard added to the manifest by hand" "${trainer[@]}" "${tiny[@]}" --data.dir added \
  --run.name x --train.max_steps 2
cp -r data version1 && printf '\001' | dd of=version1/train.index bs=1 seek=16 conv=notrunc 2>/dev/null
row "train: a split index of format 1" "${trainer[@]}" "${tiny[@]}" --data.dir version1 \
  --run.name x --train.max_steps 2
row "prepare --upgrade of that dataset" "${prepare[@]}" --upgrade version1
head -2 long.en > short.ref
row "evaluate: scoring fails after decoding (a reference file of 2 lines)" bash -c "python3 -c '
import hashlib, json, os
m = json.load(open(\"data/manifest.json\")); m[\"splits\"][\"test\"][\"sources\"] = [
  {\"path\": os.path.abspath(p), \"sha256\": hashlib.sha256(open(p, \"rb\").read()).hexdigest()}
  for p in (\"short.ref\", \"short.ref\")]
json.dump(m, open(\"data/manifest.json\", \"w\"))' && ${evaluate[*]} --run runs/ok --data data --split test --out \
  scored; s=\$?; wc -l < scored/hypotheses.txt; exit \$s"
