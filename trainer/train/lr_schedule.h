// Learning-rate schedules, evaluated at optimizer step s = 1, 2, ...
//
//   noam          lr = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5)   (paper §5.3)
//   inverse_sqrt  lr = peak * min(s / warmup, sqrt(warmup / s))               (fairseq)
//   constant      lr = peak * min(1, s / warmup)   (linear warmup when warmup > 0)
#pragma once
#include <cstdint>

#include "trainer/config/run_config.h"

namespace train {

class LrSchedule {
 public:
  // lr is the noam factor or the peak rate.
  LrSchedule(config::Schedule schedule, double lr, int64_t warmup_steps, int64_t d_model);
  double at(int64_t step) const;

 private:
  config::Schedule schedule_;
  double lr_;
  double warmup_;
  double d_model_;
};

}  // namespace train
