// The numerics guard: a step whose loss or gradient norm is not finite is
// skipped (no update) with a warning; max_in_a_row such steps in a row end
// the run. Both values are global (allreduced), so all ranks decide alike.
// The device skips the update by this rule as the step runs (train/step.h);
// the guard sees the step's record afterwards, warns and counts.
#pragma once
#include <cstdint>

namespace train {

class NumericsGuard {
 public:
  explicit NumericsGuard(int64_t max_in_a_row) : max_in_a_row_(max_in_a_row) {}
  // True: a finite step (applied). False: skipped. Throws std::runtime_error
  // on the max_in_a_row-th consecutive non-finite step.
  bool accept(int64_t step, double loss, double grad_norm);
  int64_t in_a_row() const { return in_a_row_; }

 private:
  int64_t max_in_a_row_;
  int64_t in_a_row_ = 0;
};

}  // namespace train
