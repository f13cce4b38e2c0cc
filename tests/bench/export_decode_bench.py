"""Decode timings of the exported models (tests/bench/export_decode_bench.sh runs it):
CTranslate2 fp32 and int8, transformers greedy and beam 4, on a run's test split,
with `threads` threads, batches of about the same size as evaluate's. Prints one
JSON line per row: {"system", "sentences", "tokens", "seconds"} (tokens: the
hypotheses' tokens, eos excluded).

Usage: export_decode_bench.py DATA_DIR CT2_DIR HF_DIR THREADS BATCH_TOKENS MAX_EXTRA [ONLY]
(HF_DIR "-": no transformers rows; MAX_EXTRA: evaluate's --max-extra-len; ONLY: one
row, ct2-float32-1, ct2-int8-4, hf-1 ..., so that a process measures one system's
memory: torch and transformers are imported for transformers' rows only).
"""
import json
import sys
import time
from pathlib import Path

import ctranslate2
import h5py

data, ct2_dir, hf_dir = (Path(a) for a in sys.argv[1:4])
threads, batch_tokens = int(sys.argv[4]), int(sys.argv[5])
MAX_EXTRA = int(sys.argv[6])  # evaluate's --max-extra-len
ONLY = sys.argv[7] if len(sys.argv) > 7 else None

manifest = json.loads((data / "manifest.json").read_text())
sources = []
for shard in manifest["splits"]["test"]["shards"]:
    with h5py.File(data / shard["file"]) as f:
        tokens, offsets = f["src/tokens"][:], f["src/offsets"][:]
        sources += [tokens[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
eos, pad = manifest["special_ids"]["eos"], manifest["special_ids"]["pad"]


def batches():  # length-sorted, cut at batch_tokens (padding included), as evaluate's
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    batch = []
    for i in order:
        if batch and (len(batch) + 1) * (len(sources[i]) + 1) > batch_tokens:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def row(system, tokens, seconds):
    print(json.dumps({"system": system, "sentences": len(sources), "tokens": tokens, "seconds": seconds}))


def bench_ct2(compute_type, beam):
    translator = ctranslate2.Translator(str(ct2_dir), device="cpu", compute_type=compute_type,
                                        intra_threads=threads, inter_threads=1)
    vocab = json.loads((ct2_dir / "shared_vocabulary.json").read_text()) \
        if (ct2_dir / "shared_vocabulary.json").exists() else json.loads((ct2_dir / "source_vocabulary.json").read_text())
    start, tokens = time.perf_counter(), 0
    for batch in batches():
        limit = max(len(sources[i]) for i in batch) + MAX_EXTRA
        results = translator.translate_batch([[vocab[t] for t in sources[i]] for i in batch], beam_size=beam,
                                             max_decoding_length=limit, min_decoding_length=0, length_penalty=0.0)
        tokens += sum(len(r.hypotheses[0]) for r in results)
    row(f"CTranslate2 {compute_type}, {'greedy' if beam == 1 else f'beam {beam}'}", tokens,
        time.perf_counter() - start)


def bench_hf(beam):
    import torch
    import transformers
    from transformers import MarianMTModel

    transformers.logging.set_verbosity_error()  # max_new_tokens over the export's max_length is meant
    torch.set_num_threads(threads)
    model = MarianMTModel.from_pretrained(hf_dir).eval()
    start, tokens = time.perf_counter(), 0
    for batch in batches():
        src = torch.full((len(batch), max(len(sources[i]) for i in batch) + 1), pad)
        for row_i, i in enumerate(batch):
            src[row_i, :len(sources[i]) + 1] = torch.tensor(sources[i] + [eos])
        with torch.no_grad():
            beam_options = dict(length_penalty=0.0, early_stopping=True) if beam > 1 else {}
            out = model.generate(input_ids=src, attention_mask=src != pad, num_beams=beam, do_sample=False,
                                 max_new_tokens=src.shape[1] - 1 + MAX_EXTRA, **beam_options)
        for seq in out[:, 1:].tolist():
            tokens += seq.index(eos) if eos in seq else sum(t != pad for t in seq)
    row(f"transformers {'greedy' if beam == 1 else f'beam {beam}'}", tokens, time.perf_counter() - start)


for beam in (1, 4):
    for compute_type in ("float32", "int8"):
        if ONLY in (None, f"ct2-{compute_type}-{beam}"):
            bench_ct2(compute_type, beam)
    if str(hf_dir) != "-" and ONLY in (None, f"hf-{beam}"):
        bench_hf(beam)
