#!/usr/bin/env bash
# Chinese couplets at the character level: the sample in tests/data/couplet
# (characters separated by spaces, as the public corpora write them),
# prepared with --vocab char --strip-spaces, reads back with h5py as the
# sample's lines without their spaces, one token per character (3-byte
# UTF-8), in the training split (cleaned) and the valid split (not), the
# same under mpirun -np 2. Without --strip-spaces the space is a token. A
# line of invalid UTF-8 is refused naming the file and line, and leaves
# nothing behind.
# Usage: prepare_couplet.sh <build dir> <source dir>
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
source "$src/tests/script_lib.bash"
enter_scratch prepare-couplet

sample=$src/tests/data/couplet
couplet=(--task text --vocab char --joint-vocab --train-src "$sample/in.txt" --train-tgt "$sample/out.txt")
valid=(--valid-src "$sample/in.txt" --valid-tgt "$sample/out.txt")
prepare_on 1 couplet1 "${couplet[@]}" "${valid[@]}" --strip-spaces
prepare_on 2 couplet2 "${couplet[@]}" "${valid[@]}" --strip-spaces
prepare_on 1 spaced "${couplet[@]}"

"$python" - "$sample" <<'PY'
import h5py, json, sys

def lines(path):
    return open(path, encoding="utf-8", newline="\n").read().split("\n")[:-1]

def decoded(d):
    """{split: [(id, src text, tgt text)]} decoded with the char vocabulary; the vocabulary."""
    m = json.load(open(f"{d}/manifest.json"))
    vocab = lines(f"{d}/vocab.txt")
    out = {}
    for split, entry in m["splits"].items():
        rows = []
        for shard in entry["shards"]:
            with h5py.File(f"{d}/{shard['file']}", "r") as f:
                sides = [(f[f"{s}/tokens"][:], f[f"{s}/offsets"][:]) for s in ("src", "tgt")]
                for i, id_ in enumerate(f["ids"][:]):
                    rows.append((int(id_), *("".join(vocab[t] for t in tokens[o[i]:o[i + 1]])
                                             for tokens, o in sides)))
        out[split] = rows
    return out, vocab, m

sample = sys.argv[1]
ups, downs = lines(f"{sample}/in.txt"), lines(f"{sample}/out.txt")
expected = [(i, u.replace(" ", ""), d.replace(" ", "")) for i, (u, d) in enumerate(zip(ups, downs))]
got, vocab, m = decoded("couplet1")
assert got == {"train": expected, "valid": expected}, "couplet: decoded lines differ from the sample"
assert all(len(token) == 1 for token in vocab[4:]) and " " not in vocab, "a token is not one character"
characters = sum(len(u) + len(d) for _, u, d in expected)
train = m["splits"]["train"]["shards"]
assert sum(s["src_tokens"] + s["tgt_tokens"] for s in train) == characters, "not one token per character"
assert all(len(u.encode()) == 3 * len(u) for _, u, _ in expected)  # every character is 3 bytes of UTF-8
assert decoded("couplet2")[:2] == (got, vocab), "couplet: -np 2 differs from -np 1"

spaced, spaced_vocab, _ = decoded("spaced")
assert " " in spaced_vocab, "without --strip-spaces the space should be a token"
assert spaced["train"][0][1:] == (ups[0].strip(), downs[0].strip()), spaced["train"][0]
print(f"couplet: {len(expected)} pairs, {characters} characters, vocabulary {len(vocab)}")
PY

# Invalid UTF-8 (a truncated character) at byte 4 of line 3.
"$python" - "$sample/in.txt" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
lines[2] = lines[2][:4] + b"\xe6\x98" + lines[2][4:]
open("bad.txt", "wb").write(b"\n".join(lines))
PY
if "$build/bin/prepare_data" --task text --vocab char --strip-spaces --out bad --train-src bad.txt \
    --train-tgt "$sample/out.txt" > bad.log 2>&1; then
  fail "invalid UTF-8 was accepted" bad.log
fi
grep -q "bad.txt:3: invalid UTF-8 at byte 4" bad.log || fail "the error does not name bad.txt:3, byte 4" bad.log
if compgen -G "bad*" | grep -qv "^bad\.\(txt\|log\)$"; then fail "left behind: $(ls -d bad*)"; fi
echo "couplet data: OK"
