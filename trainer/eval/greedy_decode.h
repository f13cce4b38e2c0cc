// Greedy decoding (batched): at each step append argmax_y p(y | src, y_<t).
// Rows stop at eos; decoding stops when every row has ended or after
// max_len tokens.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "trainer/model/transformer.h"

namespace eval {

// src [B, S] int64 (with eos, padded) -> B token sequences without bos/eos.
std::vector<std::vector<int32_t>> greedy_decode(model::EncoderDecoder& model,
                                                const torch::Tensor& src, int64_t bos,
                                                int64_t eos, int64_t max_len);

}  // namespace eval
