// Synthetic seq2seq tasks for smoke tests and the embedded default run.
//
//   copy:    src = "s3 s17 s0 s5"   tgt = "s3 s17 s0 s5"
//   reverse: src = "s3 s17 s0 s5"   tgt = "s5 s0 s17 s3"
//
// Symbols are words "s0" .. "s{N-1}", so the ordinary word tokenizer (with
// the vocabulary synthetic_symbols(N)) encodes and decodes them. Lengths are
// uniform in [min_len, max_len]; symbols are uniform. The text depends only
// on (task, options, size, seed), drawn with data::Rng (portable, not torch's RNG).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data_pipeline/prepare/parallel_text.h"

namespace data {

enum class SyntheticTask { kCopy, kReverse };

// "copy" or "reverse"; throws std::invalid_argument otherwise.
SyntheticTask parse_synthetic_task(const std::string& name);

struct SyntheticOptions {
  int64_t symbols = 20;  // N
  int64_t min_len = 4;
  int64_t max_len = 12;
};

// The symbol words in id order: "s0" .. "s{symbols-1}".
std::vector<std::string> synthetic_symbols(int64_t symbols);

// `size` sentence pairs of `task`, drawn from a generator seeded with `seed`.
ParallelText make_synthetic(SyntheticTask task, const SyntheticOptions& options, int64_t size,
                            uint64_t seed);

}  // namespace data
