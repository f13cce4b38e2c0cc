// The k largest entries of each row, for beam search's candidates.
//
// On the CPU, one pass over a row keeps its k best so far in a sorted array:
// an entry that does not beat the k-th best costs one comparison. LibTorch's
// topk first copies each row's V (value, index) pairs and then selects among
// them: on [800, 16 004] log-probs, k = 8 (a beam-4 step of the decode
// benchmark's mid model, one thread), 18 ms (LibTorch 1.13) and 23 ms (2.15)
// against this scan's 9 ms (perf of evaluate).
// Elsewhere (CUDA) it is LibTorch's topk, on the device.
#pragma once
#include <tuple>

#include <torch/torch.h>

namespace eval {

// x [N, V] float32 without NaN, k <= V -> (values [N, k], indices [N, k]
// int64), each row's best first; on the CPU, of equal values the lower index first.
std::tuple<torch::Tensor, torch::Tensor> top_k(const torch::Tensor& x, int64_t k);

}  // namespace eval
