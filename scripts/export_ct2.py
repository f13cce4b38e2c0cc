"""A run as a CTranslate2 model directory, through CTranslate2's own spec API
(ctranslate2.specs.TransformerSpec), which describes this model exactly:

- pre-norm and post-norm: the spec's `pre_norm` flag; each sublayer's LayerNorm
  is the spec's sublayer `layer_norm`, applied to the sublayer's input
  (pre-norm, with a final LayerNorm per stack) or after the residual sum
  (post-norm), as in trainer/model/sublayer.h;
- LayerNorm epsilon: the config's `layer_norm_epsilon` (the model's own value,
  1e-6 by default, not a library default);
- embeddings times sqrt(d_model): the spec's `scale_embeddings`;
- the positional encoding: the model's own interleaved sin/cos table, stored
  in the spec (`position_encodings.encodings`), so no coordinate changes;
- attention: the spec's fused projections are the model's own layout,
  [W^Q; W^K; W^V] for self-attention, W^Q and [W^K; W^V] for the memory;
- the generator: `decoder.projection` with its bias;
- vocabularies, special tokens, decoding from <s>, and </s> appended to the
  source (`add_source_eos`) in the model's config.json, the SentencePiece
  model(s) copied beside it for the user's tokenization.

Weights are saved in float32; CTranslate2 quantizes when it loads
(compute_type="int8").
"""
import shutil
from pathlib import Path

import ctranslate2
from ctranslate2.specs import transformer_spec

from export_run import Run, sinusoid_table


class RunConverter(ctranslate2.converters.Converter):
    def __init__(self, run: Run):
        self.run = run

    def _load(self):
        run, m = self.run, self.run.model
        spec = transformer_spec.TransformerSpec.from_config(
            (m["encoder_layers"], m["decoder_layers"]), m["heads"], pre_norm=m["norm"] == "pre")
        set_encoder(spec.encoder, run)
        set_decoder(spec.decoder, run)
        spec.register_source_vocabulary(run.src.tokens)
        spec.register_target_vocabulary(run.tgt.tokens)
        token = {name: run.tgt.tokens[run.special[name]] for name in ("bos", "eos", "unk")}
        spec.config.bos_token = token["bos"]
        spec.config.eos_token = token["eos"]
        spec.config.unk_token = token["unk"]
        spec.config.decoder_start_token = token["bos"]
        spec.config.add_source_eos = True  # collate() ends every source row with eos
        spec.config.layer_norm_epsilon = m["layer_norm_eps"]
        return spec


def set_linear(spec, weight, bias):
    spec.weight = weight.numpy()
    spec.bias = bias.numpy()


def set_module(spec, run: Run, prefix: str):  # a Linear or LayerNorm saved as prefix.{weight,bias}
    if hasattr(spec, "gamma"):
        spec.gamma = run.weight(prefix + ".weight").numpy()
        spec.beta = run.weight(prefix + ".bias").numpy()
    else:
        set_linear(spec, run.weight(prefix + ".weight"), run.weight(prefix + ".bias"))


def in_projection(run: Run, attention: str):
    return run.weight(attention + ".in_proj_weight"), run.weight(attention + ".in_proj_bias")


def set_inputs(spec, run: Run, side: str, stack: str):
    embeddings = spec.embeddings[0] if isinstance(spec.embeddings, list) else spec.embeddings
    embeddings.weight = run.embedding(side).numpy()
    spec.scale_embeddings = True  # x sqrt(d_model)
    spec.position_encodings.encodings = sinusoid_table(run.model["d_model"],
                                                       run.model["max_positions"]).numpy()
    if run.model["norm"] == "pre":
        set_module(spec.layer_norm, run, stack + ".norm")


def set_encoder(spec, run: Run):
    set_inputs(spec, run, "src", "encoder")
    for i, layer in enumerate(spec.layer):
        p = f"encoder.layers.{i}"
        set_linear(layer.self_attention.linear[0], *in_projection(run, f"{p}.self_attn"))  # [W^Q; W^K; W^V]
        set_module(layer.self_attention.linear[1], run, f"{p}.self_attn.out_proj")
        set_module(layer.self_attention.layer_norm, run, f"{p}.self_attn_sublayer.norm")
        set_feed_forward(layer.ffn, run, p)


def set_decoder(spec, run: Run):
    set_inputs(spec, run, "tgt", "decoder")
    d = run.model["d_model"]
    for i, layer in enumerate(spec.layer):
        p = f"decoder.layers.{i}"
        set_linear(layer.self_attention.linear[0], *in_projection(run, f"{p}.self_attn"))  # [W^Q; W^K; W^V]
        set_module(layer.self_attention.linear[1], run, f"{p}.self_attn.out_proj")
        set_module(layer.self_attention.layer_norm, run, f"{p}.self_attn_sublayer.norm")
        w, b = in_projection(run, f"{p}.src_attn")
        set_linear(layer.attention.linear[0], w[:d], b[:d])  # W^Q
        set_linear(layer.attention.linear[1], w[d:], b[d:])  # [W^K; W^V]
        set_module(layer.attention.linear[2], run, f"{p}.src_attn.out_proj")
        set_module(layer.attention.layer_norm, run, f"{p}.src_attn_sublayer.norm")
        set_feed_forward(layer.ffn, run, p)
    set_linear(spec.projection, run.generator_weight(), run.weight("generator.bias"))


def set_feed_forward(spec, run: Run, layer: str):
    set_module(spec.linear_0, run, f"{layer}.feed_forward.w_1")
    set_module(spec.linear_1, run, f"{layer}.feed_forward.w_2")
    set_module(spec.layer_norm, run, f"{layer}.feed_forward_sublayer.norm")


def export_ct2(run: Run, out_dir: Path) -> None:
    RunConverter(run).convert(str(out_dir), force=True)
    if run.src.kind == "spm":  # for the user's tokenization, as opus-mt models ship them
        shutil.copyfile(run.src.spm_model, out_dir / "source.spm")
        shutil.copyfile(run.tgt.spm_model, out_dir / "target.spm")
