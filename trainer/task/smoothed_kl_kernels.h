// The label-smoothed loss of label_smoothing.h as two CUDA kernels, one pass
// over the logits forward and one backward (the ATen composite makes four,
// through float32 copies of [N, V]). Torch-free: raw pointers, the stream to
// launch on; smoothed_kl_cuda.h gives them tensors.
//
// Forward, one block per row: the row's max, sum of exp(x - max) (rescaled
// as the max grows: the online softmax) and sum of x in one read, then
//   lse = log sum_v exp(x_v),  log p_v = x_v - lse,
//   KL  = entropy - c log p_y - o (sum_v log p_v - log p_y - log p_pad)
// as the composite computes it, in float32 (the final combination in double).
// Backward, one block per row: d KL / d x_v = (exp(x_v - lse) - q_v) w,
// written in the logits' dtype, w = the incoming gradient (read on the
// device: no host sync) on kept rows and 0 on padding rows.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace task::kernels {

enum class LogitType { kFloat, kHalf, kBFloat16 };

struct SmoothedKlShape {
  const void* logits;  // [rows, vocab], contiguous, of `type`
  LogitType type;
  int64_t rows, vocab;
  const int64_t* target;  // [rows]
  const bool* keep;       // [rows]: false on padding positions
  int64_t pad;
  float confidence, off_value;  // c, o
};

// smoothed[r] = KL of row r (0 where !keep), nll[r] = -log p_y (0 where
// !keep), lse[r] = log sum_v exp(logits[r, v]); all float32 [rows]. A kept
// row whose target lies outside [0, vocab) gets NaN (the numerics guard
// names it). Returns the launch's error (cudaGetLastError: read, and so
// cleared, here rather than left for the next ATen launch check to throw).
cudaError_t smoothed_kl_rows(const SmoothedKlShape& shape, double entropy, float* smoothed,
                             float* nll, float* lse, cudaStream_t stream);

// grad [rows, vocab] in the logits' type; grad_out: one float32 on the device.
cudaError_t smoothed_kl_grad(const SmoothedKlShape& shape, const float* lse, const float* grad_out,
                             void* grad, cudaStream_t stream);

}  // namespace task::kernels
