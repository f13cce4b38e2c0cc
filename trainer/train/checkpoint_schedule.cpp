#include "trainer/train/checkpoint_schedule.h"

#include "base/seconds.h"

namespace train {

CheckpointSchedule::CheckpointSchedule(int64_t every_steps, double every_minutes,
                                       Clock::time_point start)
    : every_steps_{every_steps}, every_minutes_(every_minutes), last_save_(start) {}

bool CheckpointSchedule::clock_due(Clock::time_point now) const {
  return every_minutes_ > 0 && base::seconds(now - last_save_) >= 60 * every_minutes_;
}

bool CheckpointSchedule::due(int64_t step, const StepFlags& agreed) const {
  return every_steps_.due(step) || agreed.preempt || agreed.save_time;
}

}  // namespace train
