// Dropout (Srivastava et al., 2014; the paper's P_drop = 0.1): in training,
// each element is zeroed with probability p and the others scaled by
// 1 / (1 - p), so that the expected value is unchanged; in evaluation, the
// identity. As LibTorch's, with another source of randomness for float32,
// bfloat16 and float16 tensors on the CPU: LibTorch 1.13 without MKL
// (Debian's) draws each element's Bernoulli from mt19937 one at a time, 12%
// of a paper-base bf16 training step on one thread (docs/performance.md,
// "Dropout"); here each element's draw is a hash of (seed, index)
// (dropout_mask.h), vectorised and spread over the threads, the seed one
// draw of LibTorch's CPU generator, so that torch::manual_seed still fixes
// every mask (train/step.cpp seeds it per step and micro-batch). On a GPU
// (Philox, in one kernel) and for other dtypes, LibTorch's dropout.
#pragma once
#include <torch/torch.h>

namespace model {

class DropoutImpl : public torch::nn::Module {
 public:
  explicit DropoutImpl(double p);  // 0 <= p < 1

  // Any shape -> the same shape and dtype.
  torch::Tensor forward(const torch::Tensor& x);
  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(Dropout);

// The mask a training forward multiplies by on the CPU (0 or 1 / (1 - p) in
// `dtype`: float32, bfloat16 or float16), drawn with `seed`.
torch::Tensor dropout_mask(torch::IntArrayRef sizes, torch::ScalarType dtype, double p,
                           uint64_t seed);

}  // namespace model
