// Dynamic loss scaling for train.precision = "fp16", as torch.amp.GradScaler
// does it. fp16 has 5 exponent bits: a gradient below ~6e-8 flushes to zero.
// The loss is multiplied by scale() before backward, so every gradient is
// too; the step divides them by the global token count times scale() in its
// one factor. The scale is a power of two, so scaling and unscaling are
// exact and an fp16 step means the same as an unscaled one.
//
//   overflow (finite loss, non-finite gradient norm): skip the step, scale /= 2
//   growth_interval finite steps in a row:            scale *= 2
//
// An overflow at a scale of 1 or below is not the scale's doing: it goes to
// the numerics guard like any non-finite step. The state lives on the
// training device and is decided there (as GradScaler's _amp_update_scale_),
// so the host never waits for a step to know the next one's scale; state()
// reads it for state.json, so a resumed run continues it.
// Disabled (fp32, bf16): scale() is 1 and absorb_overflow() never absorbs.
#pragma once
#include <cstdint>

#include <torch/torch.h>

#include "trainer/checkpoint/train_state.h"

namespace train {

class LossScaler {
 public:
  struct Options {
    bool enabled = false;
    double init_scale = 65536.0;  // 2^16, GradScaler's
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
  };
  // `resumed`: the state a checkpoint saved (scale 0: none, start at init_scale).
  LossScaler(Options options, const checkpoint::LossScaleState& resumed,
             const torch::Device& device);

  // The loss's factor before backward: a 0-dim float64 tensor on the device.
  const torch::Tensor& scale() const { return scale_; }
  // After a step's global loss and gradient norm are known (0-dim float64
  // tensors on the device), on the device: a 0-dim bool, true where the step
  // overflowed and is skipped here (the scale backed off); false: the
  // numerics guard counts it as any step.
  torch::Tensor absorb_overflow(const torch::Tensor& loss, const torch::Tensor& grad_norm);
  // What state.json keeps (scale 0 when disabled); reads the device.
  checkpoint::LossScaleState state() const;

 private:
  Options options_;
  torch::Tensor scale_;       // 0-dim float64
  torch::Tensor good_steps_;  // finite steps in a row since the last change, 0-dim int64
};

}  // namespace train
