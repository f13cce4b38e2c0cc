// Dynamic loss scaling for train.precision = "fp16", as torch.amp.GradScaler
// does it. fp16 has 5 exponent bits: a gradient below ~6e-8 flushes to zero.
// The loss is multiplied by scale() before backward, so every gradient is
// too; GradSync divides them by the global token count times scale() in its
// one division. The scale is a power of two, so scaling and unscaling are
// exact and an fp16 step means the same as an unscaled one.
//
//   overflow (finite loss, non-finite gradient norm): skip the step, scale /= 2
//   growth_interval finite steps in a row:            scale *= 2
//
// An overflow at a scale of 1 or below is not the scale's doing: it goes to
// the numerics guard like any non-finite step. The state (scale, finite steps
// in a row) is saved in state.json, so a resumed run continues it.
// Disabled (fp32, bf16): scale() is 1 and absorb_overflow() never absorbs.
#pragma once
#include <cstdint>

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
  LossScaler(Options options, const checkpoint::LossScaleState& resumed);

  double scale() const { return options_.enabled ? state_.scale : 1.0; }
  // After a step's global loss and gradient norm are known. True: the step
  // overflowed and is skipped here (the scale backed off); false: the
  // numerics guard decides as for any step.
  bool absorb_overflow(double loss, double grad_norm);
  // What state.json keeps (scale 0 when disabled).
  checkpoint::LossScaleState state() const;

 private:
  Options options_;
  checkpoint::LossScaleState state_;
};

}  // namespace train
