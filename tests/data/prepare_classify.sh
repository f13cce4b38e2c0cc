#!/usr/bin/env bash
# Classification data, read back with h5py:
# - `prepare_data --task classify` on TSV files written here: every label
#   (through labels.txt, the training labels sorted) and decoded text equals
#   its input line, ids are the kept input lines (training lines with an
#   empty text are dropped and counted), /tgt is empty, and mpirun -np 2 and
#   3 give the same dataset;
# - `--task majority`: the same seed gives the same examples, another seed
#   others; every label is the most frequent class symbol (counted here);
#   classes are balanced; under -np 2 the same examples; and its TSV
#   (scripts/dataset_to_tsv.py) prepares back into the same examples.
# Usage: prepare_classify.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch prepare-classify

"$python" - <<'PY'
import random
random.seed(2)
labels = ["sport", "politik", "wetter", "春天"]
words = "der die das Spiel Wahl Regen Sonne 春风 得意 über Straße".split()
for split, n in (("train", 1500), ("valid", 120), ("test", 130)):
    with open(f"{split}.tsv", "w", encoding="utf-8") as f:
        for i in range(n):
            text = " ".join(random.choice(words) for _ in range(random.randint(1, 12)))
            if i % 11 == 0: text = text.replace(" ", "\t", 1) + "  "  # a tab and spaces in the text
            if split == "train" and i % 37 == 0: text = " \t "        # empty: dropped from train
            f.write(f"{random.choice(labels)}\t{text}\n")
PY

for n in 1 2 3; do
  prepare_on "$n" "tsv$n" --task classify --vocab word --train-tsv train.tsv --valid-tsv valid.tsv \
    --test-tsv test.tsv
done
majority=(--task majority --symbols 9 --classes 3 --min-len 2 --max-len 10 --train-size 3000
          --valid-size 300 --test-size 0)
prepare_on 1 maj-a "${majority[@]}" --seed 4
prepare_on 1 maj-b "${majority[@]}" --seed 4
prepare_on 2 maj-np2 "${majority[@]}" --seed 4
prepare_on 1 maj-seed5 "${majority[@]}" --seed 5
"$python" "$src/scripts/dataset_to_tsv.py" maj-a train > maj-train.tsv
prepare_on 1 maj-tsv --task classify --vocab word --train-tsv maj-train.tsv

"$python" - <<'PY'
import collections, filecmp, h5py, json

def lines(path):
    return open(path, encoding="utf-8", newline="\n").read().split("\n")[:-1]

def dataset(d):
    """{split: [(id, label name, text decoded with the word vocabulary)]}, labels.txt, manifest."""
    m = json.load(open(f"{d}/manifest.json"))
    assert m["task"] == "classification", m["task"]
    vocab, labels = lines(f"{d}/{m['tokenizer']['src_file']}"), lines(f"{d}/labels.txt")
    assert m["labels"] == {"file": "labels.txt", "count": len(labels)}, m["labels"]
    out = {}
    for split, entry in m["splits"].items():
        rows = []
        for shard in entry["shards"]:
            with h5py.File(f"{d}/{shard['file']}", "r") as f:
                assert f.attrs["num_labels"] == len(labels)
                assert f["labels"].dtype == "int64" and f["tgt/tokens"].shape == (0,)
                assert not f["tgt/offsets"][:].any()
                so, st = f["src/offsets"][:], f["src/tokens"][:]
                for i, (id_, label) in enumerate(zip(f["ids"][:], f["labels"][:])):
                    rows.append((int(id_), labels[label], " ".join(vocab[t] for t in st[so[i]:so[i + 1]])))
        out[split] = rows
    return out, labels, m

def tsv(path):
    """A TSV file's examples as expected: (line, label, normalised text); no empty text."""
    rows = []
    for i, line in enumerate(lines(path)):
        label, text = line.split("\t", 1)
        if text.split():
            rows.append((i, label, " ".join(text.split())))
    return rows

# classify
got, labels, m = dataset("tsv1")
expected = {split: tsv(f"{split}.tsv") for split in ("train", "valid", "test")}
assert got == expected, "classify: examples differ from the TSV files"
assert labels == sorted({label for _, label, _ in expected["train"]}), labels
assert labels == ["politik", "sport", "wetter", "春天"], labels  # code point = UTF-8 byte order
dropped = 1500 - len(expected["train"])
assert dropped > 0 and m["prepare"]["cleaning"]["dropped"]["empty"] == dropped, m["prepare"]["cleaning"]
for n in (2, 3):
    assert dataset(f"tsv{n}")[:2] == (got, labels), f"classify: -np {n} differs from -np 1"
    assert filecmp.cmp("tsv1/vocab.txt", f"tsv{n}/vocab.txt", shallow=False)
print(f"classify: {sum(map(len, got.values()))} examples, labels {labels}, {dropped} empty dropped")

# majority
got, labels, m = dataset("maj-a")
assert labels == ["s0", "s1", "s2"], labels
assert dataset("maj-b")[:2] == (got, labels), "majority: the same seed gives other examples"
assert dataset("maj-seed5")[0] != got, "majority: seeds 4 and 5 give the same examples"
assert dataset("maj-np2")[:2] == (got, labels), "majority: -np 2 differs from -np 1"
for split, rows in got.items():
    for id_, label, text in rows:
        counts = collections.Counter(text.split())
        top = max(counts[c] for c in labels)
        assert top > 0 and [c for c in labels if counts[c] == top] == [label], (split, id_, label, text)
per_class = collections.Counter(label for _, label, _ in got["train"])
assert all(850 < per_class[c] < 1150 for c in labels), per_class  # 1000 expected; sd 26
exported, _, _ = dataset("maj-tsv")
assert exported["train"] == got["train"], "majority: its TSV prepares into other examples"
print(f"majority: label function holds on {sum(map(len, got.values()))} examples,"
      f" train classes {dict(per_class)}")
PY
echo "classification data: OK"
