#!/usr/bin/python3
"""Print one split of a classification dataset as label<TAB>text lines.

    scripts/dataset_to_tsv.py data/majority train > train.tsv

Reads the shards with h5py, the label names from labels.txt and the tokens
from the word or char vocabulary (spm datasets: decode with the model
instead). The output is what `prepare_data --task classify --train-tsv`
reads, so a synthetic task can be turned into a TSV corpus. Examples come in
dataset order; their texts as stored (normalised whitespace in the training
split, spaces removed with --strip-spaces).
"""
import json
import sys

import h5py


def lines(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        return f.read().split("\n")[:-1]


def read(shard, name):
    """Dataset `name` of the open shard; h5py verifies each chunk's Fletcher-32
    checksum, and a damaged one stops the script naming shard and dataset."""
    try:
        return shard[name][:]
    except OSError as error:
        sys.exit(f"shard {shard.filename}: cannot read dataset {name}: {error}")


def main(directory, split):
    manifest = json.load(open(f"{directory}/manifest.json", encoding="utf-8"))
    if manifest["task"] != "classification":
        sys.exit(f"{directory} holds a {manifest['task']} dataset, not a classification one")
    kind = manifest["tokenizer"]["kind"]
    if kind not in ("word", "char"):
        sys.exit(f"{directory}: tokenizer {kind}: only word and char vocabularies are decoded here")
    vocab = lines(f"{directory}/{manifest['tokenizer']['src_file']}")
    labels = lines(f"{directory}/{manifest['labels']['file']}")
    separator = " " if kind == "word" else ""
    out = sys.stdout
    out.reconfigure(encoding="utf-8", newline="\n")
    for shard in manifest["splits"][split]["shards"]:
        with h5py.File(f"{directory}/{shard['file']}", "r") as f:
            tokens, offsets = read(f, "src/tokens"), read(f, "src/offsets")
            for i, label in enumerate(read(f, "labels")):
                text = separator.join(vocab[t] for t in tokens[offsets[i]:offsets[i + 1]])
                out.write(f"{labels[label]}\t{text}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
