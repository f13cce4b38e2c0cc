// Decoding a batch on the CPU with T > 1 LibTorch threads, where decode.cpp
// chooses it: T threads each decode a share of the batch's rows,
// single-threaded, instead of the whole batch running each operation over T
// threads.
//
// A decoding step is many small operations (the newest position only: a
// [N, 1, D] input to each projection, attention over a short cache, a
// generator of a few rows). With a small model each is too small to split:
// over threads it costs a fork and a join of LibTorch's thread pool and
// gains little, while rows decoded apart share nothing until the end. With
// larger models, whose operations do split well, shares were as fast or
// faster (docs/performance.md, "Why the code is as it is").
//
// A sentence's hypothesis can differ in the last bits of its scores from
// the one decoded with T = 1 (its share is padded to the share's longest
// source, its matrix products have fewer rows), and so, at a near-tie, in a
// token. CTranslate2 has both kinds of threads: intra_threads within each
// operation, inter_threads each translating batches of its own.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

namespace eval {

using TokenSequences = std::vector<std::vector<int32_t>>;  // one per row

// src [B, S] int64 (eos, padding) on the CPU -> decode's token sequences for
// its B rows, in row order. Row i goes to share i mod n, n = min(shares, B),
// each share cut to its own longest source and decoded in a thread of its
// own (share 0 in this one) with one LibTorch thread, as this thread's
// thread-local state (grad mode, ...) has it. On return this thread has its
// LibTorch thread count of before. If shares fail, the error of the
// lowest-numbered one is rethrown once every share has ended.
TokenSequences decode_rows_in_parallel(
    const torch::Tensor& src, int64_t pad, int shares,
    const std::function<TokenSequences(const torch::Tensor&)>& decode);

}  // namespace eval
