// Incremental decoding, where each step adds one target position (greedy and
// beam search): per layer the decoder keeps the self-attention keys and
// values of every position so far, and the encoder-decoder attention's keys
// and values of the memory, projected once. A step then costs one position's
// work instead of the whole prefix's.
//
// The rows of the batch (N: hypotheses) belong to n sources, N / n
// consecutive rows each (beam search: a source's beams). The memory's keys
// and values are kept once per source: a source's rows attend to them as one
// block of N / n queries, and reordering the beams moves only the rows' own
// keys and values.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "trainer/model/attention.h"

namespace model {

struct LayerCache {
  torch::Tensor self_keys, self_values;    // [N, h, t, d_k]
  torch::Tensor cross_keys, cross_values;  // [n, h, S, d_k]
};

struct DecoderCache {
  std::vector<LayerCache> layers;
  int64_t length = 0;  // target positions decoded so far

  // Keep sources `sources` [n'] int64 (ascending; all n of them: nothing
  // moves) and rows `rows` [N'] int64, N' / n' consecutive ones for each kept
  // source (beams reordered, finished sentences dropped).
  void select(const torch::Tensor& sources, const torch::Tensor& rows);
};

// The cache of one layer for memory [n, S, D]: the keys and values of its
// encoder-decoder attention `src_attn`.
LayerCache start_layer_cache(MultiHeadedAttentionImpl& src_attn, const torch::Tensor& memory);

// Self-attention of the newest position x [N, 1, D] over itself and every
// position before it: its keys and values join the cache's -> [N, 1, D].
// No mask: no later position exists yet.
torch::Tensor self_attention_step(MultiHeadedAttentionImpl& self_attn, const torch::Tensor& x,
                                  LayerCache& cache);

// Encoder-decoder attention of x [N, 1, D] over the cached memory keys and
// values; src_mask [n, 1, 1, S] -> [N, 1, D]
torch::Tensor cross_attention_step(MultiHeadedAttentionImpl& src_attn, const torch::Tensor& x,
                                   const LayerCache& cache, const AttentionMask& src_mask);

}  // namespace model
