// Adam's element-wise update, one pass over plain float arrays (adam_step.h
// says what it computes). Torch-free and compiled with -fno-math-errno, so
// that the loop, sqrt included, vectorises.
#pragma once
#include <cstdint>

namespace train {

struct AdamCoefficients {
  float beta1, beta2, one_minus_beta1, one_minus_beta2, eps;
  float grad_scale;
  float neg_step_size;     // -lr / (1 - beta1^t)
  float sqrt_correction2;  // sqrt(1 - beta2^t)
};

// The operations in torch::optim::Adam's order (one rounding per LibTorch kernel).
void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamCoefficients& c);

}  // namespace train
