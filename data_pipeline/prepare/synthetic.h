// Synthetic tasks for smoke tests and the embedded runs: two seq2seq tasks
// and a classification task.
//
//   copy:     src = "s3 s17 s0 s5"          tgt = "s3 s17 s0 s5"
//   reverse:  src = "s3 s17 s0 s5"          tgt = "s5 s0 s17 s3"
//   majority: src = "s3 s1 s7 s1 s0 s9"     tgt = "s1"  (the label)
//
// majority: the label is the class symbol — one of the first K symbols
// s0 .. s{K-1} (K = classes) — that occurs most often in the sequence; the
// other symbols are fillers. Sequences are drawn as for copy and redrawn
// until exactly one class symbol is the most frequent, so no example is
// ambiguous and, by symmetry, every class is equally likely.
//
// Symbols are words "s0" .. "s{N-1}", so the ordinary word tokenizer (with
// the vocabulary synthetic_symbols(N)) encodes and decodes them. Lengths are
// uniform in [min_len, max_len]; symbols are uniform. The text depends only
// on (task, options, size, seed), drawn with data::Rng (portable, not torch's RNG).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data_pipeline/prepare/parallel_text.h"

namespace data {

enum class SyntheticTask { kCopy, kReverse, kMajority };

struct SyntheticOptions {
  int64_t symbols = 20;  // N
  int64_t min_len = 4;
  int64_t max_len = 12;
  int64_t classes = 4;  // majority: K class symbols, 2 <= K <= N
};

// The symbol words in id order: "s0" .. "s{symbols-1}" (for majority,
// synthetic_symbols(classes) are the label names, in label id order).
std::vector<std::string> synthetic_symbols(int64_t symbols);

// `size` examples of `task`, drawn from a generator seeded with `seed`, as
// they are read (nothing held: memory does not grow with `size`). Throws
// std::invalid_argument for options out of range.
std::unique_ptr<PairSource> synthetic_pairs(SyntheticTask task, const SyntheticOptions& options,
                                            int64_t size, uint64_t seed);

}  // namespace data
