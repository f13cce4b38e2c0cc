// Decoding a batch of sources with the options of the evaluation job:
// greedy (beam 1) or beam search, each sentence at most its source length +
// 50 tokens (the paper's limit, section 6.1), whatever else is in the batch.
// On the CPU with T > 1 LibTorch threads, a batch is decoded by T threads,
// a share of the rows each (rows_in_parallel.h), where the model is small or
// each share has 32 rows (sentences times beams) at least; else each
// operation runs over the T threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "data_pipeline/special_ids.h"
#include "trainer/model/transformer.h"

namespace eval {

struct DecodeOptions {
  int64_t beam = 1;             // 1 = greedy
  double length_penalty = 0.6;  // GNMT α for beam search
  int64_t max_extra_len = 50;   // max output length = source length + this
};

// src [B, S] int64 (eos, padding) -> B hypotheses: token ids without bos/eos, in row order.
std::vector<std::vector<int32_t>> decode_batch(model::EncoderDecoder& model,
                                               const torch::Tensor& src,
                                               const data::SpecialIds& special,
                                               const DecodeOptions& options);

// {"method": "greedy"} or {"method": "beam", "beam": 4, "length_penalty": 0.6}, and the length
// limit.
nlohmann::json describe(const DecodeOptions& options);

}  // namespace eval
