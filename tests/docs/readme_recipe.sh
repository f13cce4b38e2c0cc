#!/usr/bin/env bash
# The README's "Train on your own data" block, taken from README.md and run as
# written (bash -euo pipefail) in a scratch directory laid out like the
# checkout (build/, scripts/, launch/, configs/ linked), on a small generated
# German -> English corpus in corpus/. Only its settings come from the
# environment, as the block offers: RANKS=2, PIECES=500 (its 40 words give
# fewer; 32 000 is refused beside them), and CONFIG = a small model
# trained for 120 steps (configs/base.toml would take days here). Then: the
# dataset, the run, the averaged beam-search scores, the translation (equal
# to the scored hypotheses: the same weights and decoding), the plot; and
# configs/base.toml, the block's default, trains one step on the same data.
# Skipped (77) where the Python tools the plot needs cannot be installed.
# Usage: readme_recipe.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
bash "$src/scripts/setup_python.sh" > /dev/null || { echo "SKIP: cannot install the Python tools"; exit 77; }
enter_scratch readme-recipe

# The block: the first ```bash fence after the heading, up to its closing fence.
awk '/^## Train on your own data/ {section = 1; next}
     section && /^## / {exit}
     section && !inside && /^```bash$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' "$src/README.md" > recipe.sh
test "$(grep -c 'build/bin/trainer' recipe.sh)" -ge 1 || fail "no recipe block found in README.md" recipe.sh

# The checkout's layout; scripts/setup_python.sh makes its venv beside scripts/,
# so the checkout's own venv is linked in.
ln -s "$build" build
for d in scripts launch configs; do ln -s "$src/$d" "$d"; done
mkdir .venv && ln -s "$src/.venv/tools" .venv/tools

# A corpus: German-like word sequences and their word-by-word English, with
# one line over --clean-max-bytes for cleaning to drop.
mkdir corpus
"$python" - <<'PY'
import random
random.seed(7)
words = {"das": "the", "haus": "house", "ist": "is", "klein": "small", "groß": "big",
         "der": "the", "hund": "dog", "läuft": "runs", "schnell": "fast", "nicht": "not",
         "ein": "a", "baum": "tree", "steht": "stands", "hier": "here", "dort": "there",
         "wir": "we", "sehen": "see", "heute": "today", "morgen": "tomorrow", "und": "and"}
de = list(words)
def pair():
    s = [random.choice(de) for _ in range(random.randint(3, 12))]
    return " ".join(s), " ".join(words[w] for w in s)
for split, n in (("train", 3000), ("valid", 40), ("test", 40)):
    with open(f"corpus/{split}.de", "w") as fd, open(f"corpus/{split}.en", "w") as fe:
        for i in range(n):
            a, b = pair()
            if split == "train" and i == 5:
                a = "x" * 5000  # one 5000-byte "word": over --clean-max-bytes
            fd.write(a + "\n"); fe.write(b + "\n")
PY

cat > small.toml <<'EOF'
# A small model for the recipe's test: 120 steps of 1000 tokens on 2 ranks.
[run]
seed = 1
[data]
batch_tokens = 1000
max_len = 64
[model]
d_model = 64
heads = 4
d_ff = 128
encoder_layers = 2
decoder_layers = 2
dropout = 0.1
share_embeddings = true
tie_output = true
max_positions = 128
[optim]
schedule = "noam"
lr = 1.0
warmup_steps = 40
[train]
max_steps = 120
log_every = 10
save_every = 20
valid_every = 20
EOF

start=$SECONDS
CORPUS=corpus CONFIG=small.toml RANKS=2 PIECES=500 timeout 900 bash -euo pipefail recipe.sh > recipe.log 2>&1 \
  || fail "the README's recipe failed" recipe.log
echo "the README's recipe ran in $((SECONDS - start)) s"

"$python" - <<'PY'
import glob, json, os
m = json.load(open("data/de-en/manifest.json"))
assert m["tokenizer"]["kind"] == "spm" and m["src_vocab_size"] == m["tgt_vocab_size"], m["tokenizer"]
cleaning = m["prepare"]["cleaning"]
assert sum(cleaning["dropped"].values()) >= 1 and cleaning["kept"] == 2999, cleaning
run = "runs/de-en"
assert os.path.exists(f"{run}/finished.json"), "training did not complete"
config = open(f"{run}/config.toml").read()
assert f'dir = "{os.path.abspath("data/de-en")}"' in config, "data.dir is not saved absolute"
(out,) = glob.glob(f"{run}/eval/test-step_*-avg5-beam4")
r = json.load(open(f"{out}/results.json"))
assert r["num_examples"] == 40 and "score" in r["bleu"] and "score" in r["chrf"], r
hyps = open(f"{out}/hypotheses.txt").read().splitlines()
translated = open("test.hyp.en").read().splitlines()
assert len(translated) == 40 and translated == hyps, "--translate differs from the scored hypotheses"
assert os.path.getsize("de-en.png") > 10000, "no plot"
print(f"{out}: BLEU {r['bleu']['score']:.2f}, chrF {r['chrf']['score']:.2f}, step {r['step']}")
PY

# The block's default config on the same data: one step of the paper's base model.
timeout 300 build/bin/trainer --config configs/base.toml --data.dir data/de-en --run.out_dir runs \
  --run.name base --train.max_steps 1 --data.batch_tokens 400 --threads 2 > base.log 2>&1 \
  || fail "configs/base.toml does not train on the recipe's dataset" base.log
test -f runs/base/finished.json || fail "configs/base.toml: no finished.json" base.log
echo "README recipe: OK"
