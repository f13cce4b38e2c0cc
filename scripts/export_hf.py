"""A run as a Hugging Face `transformers` MarianMTModel directory (weights as
safetensors, config.json, generation_config.json) with its tokenizer.

MarianMTModel is this model's architecture with two differences of layout and
one of constants:

1. Its sinusoid is not interleaved. The model adds
       PE[pos, 2i] = sin(pos w_i),  PE[pos, 2i+1] = cos(pos w_i),  w_i = 10000^(-2i/d)
   while Marian computes its own table (it is not a weight in the file)
       M[pos, i] = sin(pos w_i),  M[pos, h + i] = cos(pos w_i),     h = ceil(d/2)
   so M = PE[:, perm] with perm = [0, 2, 4, ..., 1, 3, 5, ...].

   The export therefore renames the model's d_model coordinates by perm. Let
   P be the permutation matrix (P x = x[perm]). Every weight touching the
   residual stream changes:
     - a matrix reading the stream (W^Q, W^K, W^V, W_1, the generator):  W P^T,
       i.e. its columns permuted: (W P^T)(P x) = W x;
     - a matrix or bias writing to the stream (W^O, W_2, their biases, the
       embedding rows):  P W, P b, i.e. its rows permuted;
     - LayerNorm gain and bias: P g, P b. Mean and variance over the d_model
       coordinates do not depend on their order, so
       LN(P x) = P g * (P x - mu) / sigma + P b = P LN(x);
     - residual sums and ReLU act coordinate by coordinate, and the attention
       heads live inside W^Q, W^K, W^V, W^O (their rows, not the stream).
   By induction over the layers the exported model's stream is P times the
   model's, everywhere; the generator's W P^T undoes it, so the logits are the
   same numbers. Nothing is approximated: the arithmetic differs only in the
   order of float32 sums. (A tied generator reads the permuted embedding,
   E P^T, which is the generator's rule; the two stay one tensor.)

2. Attention: Marian has separate q_proj, k_proj, v_proj; the model's fused
   in_proj_weight = [W^Q; W^K; W^V] is cut in three.

3. Marian's LayerNorm epsilon is nn.LayerNorm's default, 1e-5, hard-coded
   (no config field); the model's is `model.layer_norm_eps` (1e-6 by default).
   Only a model trained with 1e-5 is exported exactly; for others the
   difference is measured (docs/export.md) and the export warns.

Marian is post-norm only, so a pre-norm run is refused (CTranslate2 takes it).
Decoding starts from the model's <s> (decoder_start_token_id = bos; Marian's
own models start from pad), and the generator's bias is final_logits_bias.
"""
import json
import sys
from pathlib import Path

import torch
from transformers import GenerationConfig, MarianConfig, MarianMTModel

from export_run import Refusal, Run

MARIAN_LAYER_NORM_EPS = 1e-5  # nn.LayerNorm's default, which MarianMTModel does not override


def sinusoid_permutation(d_model: int) -> torch.Tensor:
    """perm with Marian's table = the model's table[:, perm]: sines, then cosines."""
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def marian_state_dict(run: Run, perm: torch.Tensor) -> dict:
    """MarianMTModel's tensors from the run's, the d_model coordinates renamed by perm."""
    d = run.model["d_model"]

    def reads(w):  # a matrix reading the stream: columns
        return w[:, perm].contiguous()

    def writes(t):  # a matrix, bias or gain writing to the stream: rows
        return t[perm].contiguous()

    def linear(out, name, w, b, write=False):  # reads the stream, or (write) writes to it
        w = writes(w) if write else reads(w)
        out[name + ".weight"], out[name + ".bias"] = w, writes(b) if write else b

    def saved(prefix):  # a Linear or LayerNorm of the run: (weight, bias)
        return run.weight(prefix + ".weight"), run.weight(prefix + ".bias")

    def layer_norm(out, prefix, name):
        weight, bias = saved(prefix)
        out[name + ".weight"], out[name + ".bias"] = writes(weight), writes(bias)

    def attention(out, prefix, name):  # W^Q, W^K, W^V read the stream; W^O writes to it
        w, b = run.weight(prefix + ".in_proj_weight"), run.weight(prefix + ".in_proj_bias")
        for i, proj in enumerate(("q_proj", "k_proj", "v_proj")):
            linear(out, f"{name}.{proj}", w[i * d:(i + 1) * d], b[i * d:(i + 1) * d])
        linear(out, name + ".out_proj", *saved(prefix + ".out_proj"), write=True)

    def feed_forward(out, prefix, name):
        linear(out, name + ".fc1", *saved(prefix + ".feed_forward.w_1"))
        linear(out, name + ".fc2", *saved(prefix + ".feed_forward.w_2"), write=True)
        layer_norm(out, prefix + ".feed_forward_sublayer.norm", name + ".final_layer_norm")

    out = {}
    if run.model["share_embeddings"]:
        out["model.shared.weight"] = reads(run.embedding("src"))
    out["model.encoder.embed_tokens.weight"] = reads(run.embedding("src"))
    out["model.decoder.embed_tokens.weight"] = reads(run.embedding("tgt"))
    for i in range(run.model["encoder_layers"]):
        p, n = f"encoder.layers.{i}", f"model.encoder.layers.{i}"
        attention(out, p + ".self_attn", n + ".self_attn")
        layer_norm(out, p + ".self_attn_sublayer.norm", n + ".self_attn_layer_norm")
        feed_forward(out, p, n)
    for i in range(run.model["decoder_layers"]):
        p, n = f"decoder.layers.{i}", f"model.decoder.layers.{i}"
        attention(out, p + ".self_attn", n + ".self_attn")
        layer_norm(out, p + ".self_attn_sublayer.norm", n + ".self_attn_layer_norm")
        attention(out, p + ".src_attn", n + ".encoder_attn")
        layer_norm(out, p + ".src_attn_sublayer.norm", n + ".encoder_attn_layer_norm")
        feed_forward(out, p, n)
    out["lm_head.weight"] = reads(run.generator_weight())
    out["final_logits_bias"] = run.weight("generator.bias").unsqueeze(0)
    return out


def marian_config(run: Run) -> MarianConfig:
    m, s = run.model, run.special
    return MarianConfig(
        vocab_size=len(run.src.tokens), decoder_vocab_size=len(run.tgt.tokens),
        d_model=m["d_model"], encoder_layers=m["encoder_layers"], decoder_layers=m["decoder_layers"],
        encoder_attention_heads=m["heads"], decoder_attention_heads=m["heads"],
        encoder_ffn_dim=m["d_ff"], decoder_ffn_dim=m["d_ff"], activation_function="relu",
        max_position_embeddings=m["max_positions"], scale_embedding=True,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        share_encoder_decoder_embeddings=m["share_embeddings"], tie_word_embeddings=m["tie_output"],
        pad_token_id=s["pad"], bos_token_id=s["bos"], eos_token_id=s["eos"],
        decoder_start_token_id=s["bos"], forced_eos_token_id=None)


def check_exportable(run: Run) -> None:
    if run.model["norm"] != "post":
        raise Refusal("transformers' MarianMTModel is post-norm only and this run is pre-norm "
                      "(model.norm = \"pre\"): export it with --format ct2 (CTranslate2's "
                      "TransformerSpec takes pre-norm), or train with --model.norm post")
    if run.model["layer_norm_eps"] != MARIAN_LAYER_NORM_EPS:
        print(f"export: warning: MarianMTModel's LayerNorm epsilon is {MARIAN_LAYER_NORM_EPS:g} "
              f"(hard-coded) and this model's is {run.model['layer_norm_eps']:g}: the exported model "
              "is not exact (logits differ by ~1e-5 to 1e-4, see docs/export.md); --format ct2 "
              "keeps the model's epsilon; train with --model.layer_norm_eps 1e-5 for an exact "
              "transformers export", file=sys.stderr)


def save_tokenizer(run: Run, out_dir: Path) -> None:
    """MarianTokenizer for SentencePiece datasets (the spm models and {piece: id});
    word and character vocabularies as a fast WordLevel tokenizer (joint only)."""
    def ids(vocab):
        return {token: i for i, token in enumerate(vocab.tokens)}

    if run.src.kind == "spm":
        from transformers import MarianTokenizer
        src_vocab, tgt_vocab = out_dir / "vocab.json", out_dir / "target_vocab.json"
        src_vocab.write_text(json.dumps(ids(run.src), ensure_ascii=False))
        separate = not run.joint_vocabulary
        if separate:
            tgt_vocab.write_text(json.dumps(ids(run.tgt), ensure_ascii=False))
        tokenizer = MarianTokenizer(str(run.src.spm_model), str(run.tgt.spm_model), str(src_vocab),
                                    target_vocab_file=str(tgt_vocab) if separate else None,
                                    separate_vocabs=separate,
                                    model_max_length=run.model["max_positions"])
    else:
        tokenizer = vocabulary_tokenizer(run, ids(run.src))
    tokenizer.save_pretrained(out_dir)


def vocabulary_tokenizer(run: Run, vocab: dict):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast
    if not run.joint_vocabulary:
        raise Refusal("a word or character dataset with separate source and target vocabularies: "
                      "one transformers tokenizer holds one vocabulary (MarianTokenizer's separate "
                      "vocabularies need SentencePiece); --format ct2 takes both vocabularies")
    specials = {name: run.src.tokens[i] for name, i in run.special.items()}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token=specials["unk"]))
    if run.src.kind == "word":  # split at whitespace, join with a space
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    else:  # every code point a token, spaces included; joined with nothing
        tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("(?s)."), behavior="isolated")
        tokenizer.decoder = decoders.Fuse()
    tokenizer.post_processor = processors.TemplateProcessing(  # sources end in </s>
        single=f"$A {specials['eos']}", special_tokens=[(specials["eos"], run.special["eos"])])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, model_max_length=run.model["max_positions"],
        **{f"{name}_token": token for name, token in specials.items()})


def export_hf(run: Run, out_dir: Path) -> None:
    check_exportable(run)
    config = marian_config(run)
    model = MarianMTModel(config).eval()
    state = marian_state_dict(run, sinusoid_permutation(run.model["d_model"]))
    missing, unexpected = model.load_state_dict(state, strict=False)
    positions = {"model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"}
    if set(missing) - positions or unexpected:  # Marian's sinusoid is its own, not a weight
        raise RuntimeError(f"MarianMTModel's tensors do not match: missing {sorted(set(missing) - positions)}, "
                           f"unexpected {sorted(unexpected)}")
    model.generation_config = GenerationConfig(
        decoder_start_token_id=run.special["bos"], bos_token_id=run.special["bos"],
        eos_token_id=run.special["eos"], pad_token_id=run.special["pad"],
        max_length=run.model["max_positions"], num_beams=1)
    model.save_pretrained(out_dir)
    save_tokenizer(run, out_dir)
