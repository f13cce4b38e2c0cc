// When the training loop saves a checkpoint: every train.save_every steps,
// and whenever the steps' agreed flags ask (train/step.h): a preemption, or
// rank 0's clock past train.save_every_minutes since the last save. Rank 0
// raises that flag in a step's allreduce rather than saving on its own, so
// that every rank saves at the same step.
#pragma once
#include <chrono>
#include <cstdint>

#include "trainer/train/step.h"
#include "trainer/train/step_interval.h"

namespace train {

class CheckpointSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  // every_minutes 0: no timed saves. The clock runs from `start`.
  CheckpointSchedule(int64_t every_steps, double every_minutes, Clock::time_point start);

  // Rank 0's clock asks for a timed save (StepFlags::save_time).
  bool clock_due(Clock::time_point now) const;
  bool due(int64_t step, const StepFlags& agreed) const;
  void saved(Clock::time_point now) { last_save_ = now; }

 private:
  const StepInterval every_steps_;
  const double every_minutes_;
  Clock::time_point last_save_;
};

}  // namespace train
