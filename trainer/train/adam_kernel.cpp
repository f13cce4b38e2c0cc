#include "trainer/train/adam_kernel.h"

#include <cmath>

namespace train {

void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamCoefficients& c) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] * c.grad_scale;
    const float m = exp_avg[i] * c.beta1 + g * c.one_minus_beta1;
    const float v = exp_avg_sq[i] * c.beta2 + c.one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    param[i] = param[i] + c.neg_step_size * m / (std::sqrt(v) / c.sqrt_correction2 + c.eps);
  }
}

}  // namespace train
