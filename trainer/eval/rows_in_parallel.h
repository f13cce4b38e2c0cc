// Decoding a batch on the CPU with T > 1 LibTorch threads: T threads each
// decode a share of the batch's rows, single-threaded, instead of the whole
// batch running each operation over T threads.
//
// A decoding step is many small operations (the newest position only: a
// [N, 1, D] input to each projection, attention over a short cache, a
// generator of a few rows). Split over threads, each costs a fork and a join
// of LibTorch's thread pool and gains little; rows decoded apart share
// nothing until the end. Measured with tests/bench/export_decode_bench.sh,
// 2 threads on 2 cores (LibTorch 1.13, OpenBLAS): the small model's greedy
// decoding took 0.105 s with both threads in each operation — slower than
// one thread alone (0.097 s) — and 0.08-0.09 s in two halves; the mid and
// base models the same either way (0.57 s, 1.40-1.47 s greedy), their
// operations large enough to split.
//
// CTranslate2 has both kinds: intra_threads within each operation,
// inter_threads each translating batches of its own.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

namespace eval {

using Hypotheses = std::vector<std::vector<int32_t>>;  // token ids, one row each

// src [B, S] int64 (eos, padding) on the CPU -> decode's hypotheses for its B
// rows, in row order: decode runs on `threads` consecutive shares of the rows
// at once (fewer if B is smaller), each share cut to its own longest source,
// each in a thread of its own with one LibTorch thread; this thread runs the
// first share and, all done, has `threads` LibTorch threads again. The first
// share's error, if any, is rethrown once every share has ended.
Hypotheses decode_rows_in_parallel(const torch::Tensor& src, int64_t pad, int threads,
                                   const std::function<Hypotheses(const torch::Tensor&)>& decode);

}  // namespace eval
