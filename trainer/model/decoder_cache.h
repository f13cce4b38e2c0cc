// What the decoder keeps between the steps of incremental decoding, where
// each step adds one target position (greedy and beam search): per layer,
// the self-attention keys and values of every position so far, and the
// encoder-decoder attention's keys and values of the memory, projected once.
// A step then costs one position's work instead of the whole prefix's.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace model {

struct LayerCache {
  torch::Tensor self_keys, self_values;    // [N, h, t, d_k]
  torch::Tensor cross_keys, cross_values;  // [N, h, S, d_k]
};

struct DecoderCache {
  std::vector<LayerCache> layers;
  int64_t length = 0;  // target positions decoded so far

  // Keep rows `rows` [N'] int64 of every tensor (beams reordered, finished rows dropped).
  void select_rows(const torch::Tensor& rows);
};

}  // namespace model
