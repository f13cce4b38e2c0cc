// The label-smoothed loss's CUDA kernels (smoothed_kl_kernels.h) on tensors:
// LabelSmoothingLoss takes them for logits on a GPU, where the loss is
// memory-bound and its passes over [N, V] are its time. Built only where
// LibTorch has CUDA (TRAINER_WITH_CUDA).
#pragma once
#include <torch/torch.h>

namespace task::cuda {

// Whether the kernels compute this loss: [N, V] logits on a CUDA device, in
// float32, float16 or bfloat16 (float64 stays with the ATen composite).
bool takes(const torch::Tensor& logits);

struct SmoothedKlRows {
  torch::Tensor smoothed, nll, lse;  // [N] float32 each; 0 on padding rows
};

struct SmoothedKlTarget {
  const torch::Tensor& target;  // [N] int64
  const torch::Tensor& keep;    // [N] bool: not padding
  int64_t pad;
  double confidence, off_value;  // c, o
};

// Per row: KL(q || p), -log p_y, log sum_v exp(logits).
SmoothedKlRows smoothed_kl_rows(const torch::Tensor& logits, const SmoothedKlTarget& q,
                                double entropy);

// d (sum of KL, weighted by grad_out) / d logits, in the logits' dtype [N, V].
torch::Tensor smoothed_kl_grad(const torch::Tensor& logits, const SmoothedKlTarget& q,
                               const torch::Tensor& lse, const torch::Tensor& grad_out);

}  // namespace task::cuda
