"""The project's BLEU and chrF (build/bin/score) against sacreBLEU itself.

    sacrebleu_reference.py SCORE_PROGRAM WORK_DIR [SEED ...]

For each seed a corpus is generated (random Unicode-rich text: words of many
scripts, Chinese characters, emoji, combining marks, Unicode whitespace,
HTML entities, "<skipped>", the punctuation and digit cases the 13a rules
treat specially, empty lines, 1 to 3 reference streams) and scored under
every BLEU tokenizer (13a, zh, char, none) with every smoothing (exp, floor,
add-k, none), with lowercasing, effective order, other smoothing values and
orders, and under chrF and chrF++ variants. Every score, n-gram statistic and
signature must equal sacreBLEU's (scores within 1e-9). A mismatch is shown
with the first segment whose own statistics differ.

Exit status: 0 all equal, 1 a difference.
"""
import json
import random
import subprocess
import sys
import warnings
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

TOLERANCE = 1e-9

# ---- corpora -------------------------------------------------------------------

WORDS = [
    "the", "The", "dog", "bit", "man", "it's", "don't", "U.S.", "e.g.", "naïve", "Straße",
    "İstanbul", "ΟΔΟΣ", "Σ", "σοφός", "Москва", "ǅemal", "ﬁsh", "Ꭰ", "مرحبا", "שלום", "नमस्ते",
    "한국어", "ひらがな", "カタカナ", "e\u0301te\u0301", "😀", "👍🏽", "a\u200db", "\ufeffbom",
]
NUMBERS = ["3.5", "1,000", "3-4", "-5", "2.", ".5", "10%", "$20", "1999-2000", "3,5", "7.", "0.5-1",
           "12:30", "4/5", "1e-3"]
PUNCTUATION = ["end.", "(hi)", "word,", '"quoted"', "'s", "...", "--", "@user", "#tag", "a/b",
               "<b>", "{x}", "[y]", "~z", "^", "`q`", "_u_", "|p|", "\\", ".", ",", "-", "a.,b",
               "x-", "-y", "!?", "Hi!", "ok;", "A:B", "a+b=c", "*", "&"]
ENTITIES = ["&quot;", "&amp;", "&lt;", "&gt;", "&apos;", "&amp;lt;", "&quot;hi&quot;", "<skipped>"]
CHINESE = "，。！？（）：“”、《》"  # full-width punctuation; characters are drawn below
SPACES = [" "] * 12 + ["  ", "\t", "\u00a0", "\u3000", "\u2003", "\x0b", "\x0c", "\x1c", "\x85",
                       "\u2028", "\r"]


def random_code_point(rng):
    """Any scalar value but the line break (surrogates cannot be UTF-8)."""
    while True:
        c = rng.choice([rng.randrange(0x20, 0x2000), rng.randrange(0x2000, 0x10000),
                        rng.randrange(0x10000, 0x30000)])
        if c != 0x0A and not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def random_chinese(rng, n):
    ranges = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF)]
    out = []
    for _ in range(n):
        lo, hi = rng.choice(ranges)
        out.append(chr(rng.randint(lo, hi)) if rng.random() < 0.85 else rng.choice(CHINESE))
    return "".join(out)


def random_token(rng, shared):
    kind = rng.random()
    if kind < 0.35:
        return rng.choice(shared)  # a small vocabulary, so that n-grams match
    if kind < 0.5:
        return rng.choice(WORDS)
    if kind < 0.6:
        return rng.choice(NUMBERS)
    if kind < 0.72:
        return rng.choice(PUNCTUATION)
    if kind < 0.78:
        return rng.choice(ENTITIES)
    if kind < 0.9:
        return random_chinese(rng, rng.randint(1, 4))
    return "".join(random_code_point(rng) for _ in range(rng.randint(1, 3)))


def random_line(rng, shared):
    if rng.random() < 0.08:
        return ""
    tokens = [random_token(rng, shared) for _ in range(rng.randint(1, 18))]
    line = tokens[0]
    for token in tokens[1:]:
        line += rng.choice(SPACES) + token
    if rng.random() < 0.1:
        line = rng.choice(SPACES) + line + rng.choice(SPACES)
    return line


def perturb(rng, line, shared):
    """A hypothesis near a reference: words dropped, swapped, replaced, recased."""
    words = line.split(" ")
    out = []
    for word in words:
        r = rng.random()
        if r < 0.1:
            continue
        if r < 0.2:
            word = random_token(rng, shared)
        elif r < 0.27:
            word = word.upper() if rng.random() < 0.5 else word.lower()
        out.append(word)
    if len(out) > 1 and rng.random() < 0.3:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return " ".join(out)


def make_corpus(seed):
    """(hypotheses, reference streams): 1..40 segments, 1..3 streams."""
    rng = random.Random(seed)
    shared = ["a", "b", "of", "to", "in", "Test", "ein", "kleiner", "春", "风"]
    n, streams = rng.randint(1, 40), rng.randint(1, 3)
    refs = [[random_line(rng, shared) for _ in range(n)] for _ in range(streams)]
    hyps = []
    for i in range(n):
        r = rng.random()
        hyps.append("" if r < 0.08 else random_line(rng, shared) if r < 0.25
                    else perturb(rng, refs[rng.randrange(streams)][i], shared))
    return hyps, refs


# ---- settings ------------------------------------------------------------------

def settings():
    """(BLEU keyword arguments, chrF keyword arguments, lowercase) triples."""
    chrf_variants = [{}, {"word_order": 2}, {"whitespace": True}, {"eps_smoothing": True},
                     {"char_order": 4, "beta": 1}, {"word_order": 2, "eps_smoothing": True, "whitespace": True},
                     {"char_order": 3, "word_order": 1, "beta": 3}]
    bleu_variants = [{"tokenize": t, "smooth_method": s}
                     for t in ("13a", "zh", "char", "none") for s in ("exp", "floor", "add-k", "none")]
    bleu_variants += [{"tokenize": "13a", "effective_order": True},
                      {"tokenize": "zh", "smooth_method": "floor", "smooth_value": 0.3},
                      {"tokenize": "13a", "smooth_method": "add-k", "smooth_value": 2},
                      {"tokenize": "char", "max_ngram_order": 6},
                      {"tokenize": "none", "max_ngram_order": 2, "effective_order": True}]
    out = []
    for i, bleu in enumerate(bleu_variants):
        out.append((bleu, chrf_variants[i % len(chrf_variants)], False))
    for i, tokenize in enumerate(("13a", "zh", "char", "none")):
        out.append(({"tokenize": tokenize}, chrf_variants[i], True))
    return out


def command_line(bleu, chrf, lowercase):
    args = [f"--tokenize={bleu['tokenize']}", f"--smooth-method={bleu.get('smooth_method', 'exp')}"]
    if "smooth_value" in bleu:
        args.append(f"--smooth-value={bleu['smooth_value']}")
    if "max_ngram_order" in bleu:
        args.append(f"--max-ngram-order={bleu['max_ngram_order']}")
    if bleu.get("effective_order"):
        args.append("--effective-order")
    for key in ("char_order", "word_order", "beta"):
        if key in chrf:
            args.append(f"--chrf-{key.replace('_', '-')}={chrf[key]}")
    for key in ("whitespace", "eps_smoothing"):
        if chrf.get(key):
            args.append(f"--chrf-{key.replace('_', '-')}")
    if lowercase:
        args.append("--lowercase")
    return args


# ---- both sides ----------------------------------------------------------------

def sacrebleu_scores(hyps, refs, bleu_kwargs, chrf_kwargs, lowercase):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bleu = BLEU(lowercase=lowercase, **bleu_kwargs)
        b = bleu.corpus_score(hyps, refs)
        chrf = CHRF(lowercase=lowercase, **chrf_kwargs)
        c = chrf.corpus_score(hyps, refs)
    # corpus_score sums these per-segment statistics. BLEU: sys_len, ref_len,
    # counts, totals (BLEUScore.counts has add-k's k added); chrF: hyp, ref, match per order.
    b_sums = corpus_statistics(bleu, hyps, refs)
    c_sums = corpus_statistics(chrf, hyps, refs)
    order = len(b.counts)
    return {
        "bleu": {"score": b.score, "counts": b_sums[2:2 + order], "totals": b_sums[2 + order:],
                 "precisions": b.precisions, "bp": b.bp, "sys_len": b.sys_len, "ref_len": b.ref_len,
                 "signature": str(bleu.get_signature())},
        "chrf": {"score": c.score, "name": c.name,
                 "statistics": [c_sums[i:i + 3] for i in range(0, len(c_sums), 3)],
                 "signature": str(chrf.get_signature())},
    }


def corpus_statistics(metric, hyps, refs):
    return [sum(column) for column in zip(*metric._extract_corpus_statistics(hyps, refs))]


def write_lines(path, lines):
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))


def project_scores(program, work, hyps, refs, args):
    write_lines(work / "hyps.txt", hyps)
    ref_files = []
    for k, stream in enumerate(refs):
        ref_files.append(work / f"ref{k}.txt")
        write_lines(ref_files[-1], stream)
    run = subprocess.run([program, work / "hyps.txt", *ref_files, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{program} {' '.join(args)} failed: {run.stderr}")
    return json.loads(run.stdout)


def differences(expected, got, path=""):
    """Where two JSON values differ (numbers within TOLERANCE), as 'path: expected vs got'."""
    if isinstance(expected, dict):
        keys = sorted(set(expected) | set(got))
        return [d for k in keys for d in differences(expected.get(k), got.get(k), f"{path}.{k}")]
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        return [d for i, (e, g) in enumerate(zip(expected, got)) for d in differences(e, g, f"{path}[{i}]")]
    if isinstance(expected, float) or isinstance(got, float):
        if isinstance(got, (int, float)) and abs(expected - got) <= TOLERANCE:
            return []
    elif expected == got:
        return []
    return [f"{path}: sacreBLEU {expected!r}, project {got!r}"]


def first_differing_segment(program, work, hyps, refs, setting):
    for i in range(len(hyps)):
        seg_refs = [[stream[i]] for stream in refs]
        if differences(sacrebleu_scores([hyps[i]], seg_refs, *setting),
                       project_scores(program, work, [hyps[i]], seg_refs, command_line(*setting))):
            return f"segment {i}: hypothesis {hyps[i]!r}, references {[s[i] for s in refs]!r}"
    return "no single segment differs"


def main():
    program, work = sys.argv[1], Path(sys.argv[2])
    seeds = [int(s) for s in sys.argv[3:]] or list(range(1, 21))
    work.mkdir(parents=True, exist_ok=True)
    compared, failures, worst = 0, 0, 0.0
    for seed in seeds:
        hyps, refs = make_corpus(seed)
        for setting in settings():
            expected = sacrebleu_scores(hyps, refs, *setting)
            got = project_scores(program, work, hyps, refs, command_line(*setting))
            worst = max(worst, abs(expected["bleu"]["score"] - got["bleu"]["score"]),
                        abs(expected["chrf"]["score"] - got["chrf"]["score"]))
            compared += 1
            found = differences(expected, got)
            if found:
                failures += 1
                print(f"FAIL seed {seed}, {' '.join(command_line(*setting))}:")
                for line in found[:8]:
                    print(f"  {line}")
                print(f"  {first_differing_segment(program, work, hyps, refs, setting)}")
    print(f"{compared - failures} of {compared} settings x corpora equal to sacreBLEU "
          f"({len(seeds)} corpora, largest score difference {worst:.1e})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
