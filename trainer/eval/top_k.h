// The k largest entries of each row, for beam search's candidates: of a
// row of scores, and of a row of logits as log-probabilities.
//
// On the CPU, one pass over a row keeps its k best so far in a sorted array,
// and a block of 64 entries none of which beats the k-th best costs a few
// vector instructions. LibTorch's topk first copies each row's V (value,
// index) pairs and then selects among them, several times slower
// (docs/performance.md, "Why the code is as it is").
//
// top_k_log_probs takes the logits: the k best logits are the k most likely
// tokens, and only their log-probabilities are made, x − max − log Σ exp(x −
// max) as the log-softmax makes them, with the sum over the row while it is
// still in the cache (a vectorised exp, relative error below 3e-7, in AVX2
// where the CPU has it), instead of the log-softmax of the whole [N, V]
// (three passes and a second [N, V]) and a top-k over it.
// Elsewhere (CUDA) both are LibTorch's, on the device.
#pragma once
#include <tuple>

#include <torch/torch.h>

namespace eval {

// x [N, V] float32 without NaN, k <= V -> (values [N, k], indices [N, k]
// int64), each row's best first; on the CPU, of equal values the lower index first.
std::tuple<torch::Tensor, torch::Tensor> top_k(const torch::Tensor& x, int64_t k);

// logits [N, V] (finite or −inf) -> the k most likely tokens of each row:
// (log p [N, k] float32, tokens [N, k] int64), as top_k orders them.
std::tuple<torch::Tensor, torch::Tensor> top_k_log_probs(const torch::Tensor& logits, int64_t k);

}  // namespace eval
