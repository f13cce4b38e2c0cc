"""The project's encoder-decoder (trainer/model/) written out again in plain
torch from a state dict, independently of the exporters, for the parity test's
"this model's logits". It is checked against the C++ model itself: its
teacher-forced NLL on the test split must equal evaluate's results.json.

    memory = Encoder(PE(Embed_src(src) * sqrt(d)))
    logits = Decoder(PE(Embed_tgt(tgt_in) * sqrt(d)), memory) W^T + b
"""
import math

import torch
import torch.nn.functional as F


class ReferenceModel:
    def __init__(self, state: dict, model: dict, pad: int, dtype=torch.float32):
        state = {name: t.to(dtype) for name, t in state.items()}
        self.s, self.m, self.pad = state, model, pad
        self.d, self.h = model["d_model"], model["heads"]
        self.pre = model["norm"] == "pre"
        src = state["src_embed.lut.weight"]
        self.src_embed = src
        self.tgt_embed = src if model["share_embeddings"] else state["tgt_embed.lut.weight"]
        self.out_weight = self.tgt_embed if model["tie_output"] else state["generator.weight"]
        position = torch.arange(model["max_positions"], dtype=torch.float64).unsqueeze(1)
        rate = torch.exp(torch.arange(0, self.d, 2, dtype=torch.float64) * (-math.log(10000.0) / self.d))
        pe = torch.zeros(model["max_positions"], self.d, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * rate), torch.cos(position * rate)
        self.pe = pe.float().to(dtype)  # the model's float32 table

    def norm(self, x, prefix):
        return F.layer_norm(x, (self.d,), self.s[prefix + ".weight"], self.s[prefix + ".bias"],
                            self.m["layer_norm_eps"])

    def attention(self, x, memory, prefix, mask):
        w, b, d, h = self.s[prefix + ".in_proj_weight"], self.s[prefix + ".in_proj_bias"], self.d, self.h
        q, k, v = (F.linear(inp, w[i * d:(i + 1) * d], b[i * d:(i + 1) * d])
                   for i, inp in enumerate((x, memory, memory)))
        q, k, v = (t.view(t.shape[0], t.shape[1], h, d // h).transpose(1, 2) for t in (q, k, v))
        scores = (q / math.sqrt(d // h)) @ k.transpose(-2, -1)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        heads = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(x.shape)
        return F.linear(heads, self.s[prefix + ".out_proj.weight"], self.s[prefix + ".out_proj.bias"])

    def feed_forward(self, x, prefix):
        hidden = F.relu(F.linear(x, self.s[prefix + ".w_1.weight"], self.s[prefix + ".w_1.bias"]))
        return F.linear(hidden, self.s[prefix + ".w_2.weight"], self.s[prefix + ".w_2.bias"])

    def sublayer(self, x, prefix, f):
        if self.pre:
            return x + f(self.norm(x, prefix + ".norm"))
        return self.norm(x + f(x), prefix + ".norm")

    def embed(self, table, tokens):
        return table[tokens] * math.sqrt(self.d) + self.pe[: tokens.shape[1]]

    @torch.no_grad()
    def logits(self, src, tgt_in):
        """src [B, S] (eos-terminated, pad-filled), tgt_in [B, T] (bos first) -> [B, T, V]"""
        src_mask = (src != self.pad)[:, None, None, :]
        tgt_mask = (tgt_in != self.pad)[:, None, None, :] & torch.ones(
            tgt_in.shape[1], tgt_in.shape[1], dtype=torch.bool).tril()
        x = self.embed(self.src_embed, src)
        for i in range(self.m["encoder_layers"]):
            p = f"encoder.layers.{i}"
            x = self.sublayer(x, p + ".self_attn_sublayer",
                              lambda y: self.attention(y, y, p + ".self_attn", src_mask))
            x = self.sublayer(x, p + ".feed_forward_sublayer", lambda y: self.feed_forward(y, p + ".feed_forward"))
        memory = self.norm(x, "encoder.norm") if self.pre else x
        x = self.embed(self.tgt_embed, tgt_in)
        for i in range(self.m["decoder_layers"]):
            p = f"decoder.layers.{i}"
            x = self.sublayer(x, p + ".self_attn_sublayer",
                              lambda y: self.attention(y, y, p + ".self_attn", tgt_mask))
            x = self.sublayer(x, p + ".src_attn_sublayer",
                              lambda y: self.attention(y, memory, p + ".src_attn", src_mask))
            x = self.sublayer(x, p + ".feed_forward_sublayer", lambda y: self.feed_forward(y, p + ".feed_forward"))
        if self.pre:
            x = self.norm(x, "decoder.norm")
        return F.linear(x, self.out_weight, self.s["generator.bias"])
