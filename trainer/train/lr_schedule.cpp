#include "trainer/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace train {

LrSchedule::LrSchedule(config::Schedule schedule, double lr, int64_t warmup_steps, int64_t d_model)
    : schedule_(schedule),
      lr_(lr),
      warmup_(static_cast<double>(warmup_steps)),
      d_model_(static_cast<double>(d_model)) {
  if (schedule_ != config::Schedule::kConstant && warmup_ <= 0)
    throw std::invalid_argument("schedule " + settings::name_of(config::kScheduleNames, schedule_) +
                                " needs warmup_steps > 0");
}

double LrSchedule::at(int64_t step) const {
  if (step < 1) throw std::invalid_argument("learning-rate schedule starts at step 1");
  const double s = static_cast<double>(step);
  if (schedule_ == config::Schedule::kNoam)
    return lr_ * std::pow(d_model_, -0.5) *
           std::min(std::pow(s, -0.5), s * std::pow(warmup_, -1.5));
  if (schedule_ == config::Schedule::kInverseSqrt)
    return lr_ * std::min(s / warmup_, std::sqrt(warmup_ / s));
  return warmup_ > 0 ? lr_ * std::min(1.0, s / warmup_) : lr_;
}

}  // namespace train
