#include "trainer/train/numerics_guard.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "base/logging.h"

namespace train {

bool NumericsGuard::accept(int64_t step, double loss, double grad_norm) {
  if (std::isfinite(loss) && std::isfinite(grad_norm)) {
    in_a_row_ = 0;
    return true;
  }
  ++in_a_row_;
  if (in_a_row_ >= max_in_a_row_)
    throw std::runtime_error("step " + std::to_string(step) + ": " + std::to_string(in_a_row_) +
                             " non-finite steps in a row (loss " + std::to_string(loss) +
                             ", gradient norm " + std::to_string(grad_norm) +
                             "); giving up (train.max_nonfinite_steps)");
  logging::warn("step {}: non-finite loss {} or gradient norm {}: update skipped ({} in a row)",
                step, loss, grad_norm, in_a_row_);
  return false;
}

}  // namespace train
