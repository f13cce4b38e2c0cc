#!/usr/bin/env bash
# `mpirun -np N prepare_data` writes the same dataset as one process: the
# same examples with the same ids in the same order, the same vocabulary
# files and cleaning counts, for N = 2 and 3, with a word vocabulary, with
# SentencePiece and for a synthetic task. Read back with h5py. The
# manifests' content_sha256 is the same for every N and equals a reading of
# data_pipeline/dataset_identity.h's definition here with hashlib; a run
# trained on the -np 1 dataset resumes on the -np 3 one.
# Usage: prepare_parallel.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch prepare-parallel

# A text corpus with lines cleaning drops (empty, too long, bad ratio).
"$python" - <<'PY'
import random
random.seed(1)
words = "the a house river small big über Straße 春风 得意 night light".split()
with open("train.src", "w") as s, open("train.tgt", "w") as t:
    for i in range(3001):
        n = random.randint(1, 12)
        a = " ".join(random.choice(words) for _ in range(n))
        b = " ".join(random.choice(words) for _ in range(random.randint(1, 12)))
        if i % 97 == 0: a = ""
        if i % 89 == 0: b = " ".join(["x"] * 300)
        s.write(a + "\n"); t.write(b + "\n")
PY
head -100 train.src > valid.src; head -100 train.tgt > valid.tgt

for n in 1 2 3; do
  prepare_on "$n" "word$n" --task text --vocab word --train-src train.src --train-tgt train.tgt \
    --valid-src valid.src --valid-tgt valid.tgt
  prepare_on "$n" "spm$n" --task text --vocab spm --joint-vocab --spm-vocab-size 200 \
    --train-src train.src --train-tgt train.tgt
  prepare_on "$n" "copy$n" --task copy --train-size 2000 --valid-size 50 --test-size 50
done
grep -q "cleaning kept" word1.log || fail "no cleaning report" word1.log

"$python" - <<'PY'
import filecmp, h5py, hashlib, json, struct

def examples(d):
    m = json.load(open(f"{d}/manifest.json"))
    out = {}
    for split, entry in m["splits"].items():
        rows = []
        for shard in entry["shards"]:
            with h5py.File(f"{d}/{shard['file']}") as f:
                so, to = f["src/offsets"][:], f["tgt/offsets"][:]
                st, tt = f["src/tokens"][:], f["tgt/tokens"][:]
                for i, id_ in enumerate(f["ids"][:]):
                    rows.append((int(id_), st[so[i]:so[i+1]].tolist(), tt[to[i]:to[i+1]].tolist()))
        out[split] = rows
    return m, out

def content_sha256(d, m, examples):
    """dataset_identity.h's definition, from the manifest and the examples."""
    h = hashlib.sha256()
    integer = lambda v: h.update(struct.pack("<q", v))
    def text(t):
        integer(len(t.encode())); h.update(t.encode())
    def tokens(seq):
        integer(len(seq)); h.update(struct.pack(f"<{len(seq)}i", *seq))
    file_sha = lambda f: hashlib.sha256(open(f"{d}/{f}", "rb").read()).hexdigest()
    text("transformer-dataset content 1"); text(m["task"]); text(m["tokenizer"]["kind"])
    s = m["special_ids"]
    for v in (m["src_vocab_size"], m["tgt_vocab_size"], s["pad"], s["bos"], s["eos"], s["unk"],
              m.get("labels", {}).get("count", 0)):
        integer(v)
    text(file_sha(m["tokenizer"]["src_file"])); text(file_sha(m["tokenizer"]["tgt_file"]))
    text(file_sha(m["labels"]["file"]) if "labels" in m else "")
    for split in sorted(examples):
        text(split); integer(len(examples[split]))
        for id_, src, tgt in examples[split]:
            integer(id_); tokens(src); tokens(tgt); integer(-1)
    return h.hexdigest()

for kind, files in (("word", ["vocab.src.txt", "vocab.tgt.txt"]), ("spm", ["spm.model", "spm.vocab"]),
                    ("copy", ["vocab.txt"])):
    m1, e1 = examples(f"{kind}1")
    assert sum(len(r) for r in e1.values()) > 0
    assert m1["content_sha256"] == content_sha256(f"{kind}1", m1, e1), kind
    for n in (2, 3):
        mn, en = examples(f"{kind}{n}")
        assert en == e1, f"{kind}: -np {n} examples differ from -np 1"
        assert mn["prepare"].get("cleaning") == m1["prepare"].get("cleaning"), kind
        assert (mn["src_vocab_size"], mn["tgt_vocab_size"]) == (m1["src_vocab_size"], m1["tgt_vocab_size"])
        for f in files:
            assert filecmp.cmp(f"{kind}1/{f}", f"{kind}{n}/{f}", shallow=False), (kind, n, f)
        assert mn["prepare"]["ranks"] == n
        assert mn["content_sha256"] == m1["content_sha256"], (kind, n)
    print(f"{kind}: -np 2 and -np 3 equal -np 1 ({sum(len(r) for r in e1.values())} examples,"
          f" ids {e1['train'][:3] and [r[0] for r in e1['train'][:3]]}...)")
c = json.load(open("word1/manifest.json"))["prepare"]["cleaning"]
assert c["dropped"]["empty"] > 0 and c["dropped"]["too_long"] > 0, c
PY

# The same dataset, whatever the ranks that prepared it: a run on copy1 resumes on copy3.
trainer_run resumed 1 --data.dir copy1 --train.max_steps 2 || fail "training on copy1" resumed.log
trainer_run resumed 1 --data.dir copy3 --train.max_steps 3 --resume latest ||
  fail "resuming on copy3 (prepared on 3 ranks)" resumed.log
grep -q "resuming from .*step_00000002 (step 2" resumed.log || fail "no resume from step 2" resumed.log
echo "parallel prepare: OK"
