#include "trainer/train/loss_scaler.h"

#include <cmath>

#include "launch/logging.h"

namespace train {

LossScaler::LossScaler(Options options, const checkpoint::LossScaleState& resumed)
    : options_(options), state_(resumed) {
  if (state_.scale <= 0) state_ = {options_.init_scale, 0};
}

bool LossScaler::absorb_overflow(double loss, double grad_norm) {
  if (!options_.enabled) return false;
  if (std::isfinite(grad_norm)) {
    if (++state_.good_steps == options_.growth_interval) {
      state_.scale *= options_.growth_factor;
      state_.good_steps = 0;
    }
    return false;
  }
  state_.good_steps = 0;
  if (!std::isfinite(loss) || state_.scale <= 1.0) return false;
  state_.scale *= options_.backoff_factor;
  logging::info("fp16 gradients overflowed: step skipped, loss scale now {}", state_.scale);
  return true;
}

checkpoint::LossScaleState LossScaler::state() const {
  return options_.enabled ? state_ : checkpoint::LossScaleState{};
}

}  // namespace train
