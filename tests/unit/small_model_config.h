// A small Transformer config for tests: d_model 16, 4 heads, d_ff 32, 2 + 2
// layers, no dropout, pad id 0, 32 positions.
#pragma once
#include <cstdint>

#include "trainer/model/model_config.h"

inline model::ModelConfig small_model_config(
    int64_t src_vocab, int64_t tgt_vocab, model::NormPlacement norm = model::NormPlacement::kPre) {
  model::ModelConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.d_model = 16;
  c.heads = 4;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.dropout = 0.0;
  c.norm = norm;
  c.max_positions = 32;
  c.pad_id = 0;
  return c;
}
