// When the training loop acts (train/training.cpp's plain calls): each
// component's own due(step) — every N steps, the log's last step, the
// checkpoints' steps, clock and agreed flags — against hand-listed steps.
#include <gtest/gtest.h>

#include <vector>

#include "trainer/train/checkpoint_schedule.h"
#include "trainer/train/interval_log.h"
#include "trainer/train/step_interval.h"

namespace {

template <typename Due>
std::vector<int64_t> due_steps(int64_t last, Due due) {
  std::vector<int64_t> steps;
  for (int64_t s = 1; s <= last; ++s)
    if (due(s)) steps.push_back(s);
  return steps;
}

TEST(StepInterval, MultiplesOnlyAndNeverForZero) {
  const train::StepInterval every3{3}, never{0};
  EXPECT_EQ(due_steps(10, [&](int64_t s) { return every3.due(s); }),
            (std::vector<int64_t>{3, 6, 9}));
  EXPECT_TRUE(due_steps(10, [&](int64_t s) { return never.due(s); }).empty());
}

TEST(IntervalLog, EveryNAndTheLastStep) {
  const train::IntervalLog log(nullptr, 0, /*max_steps=*/10, /*every=*/4, {}, 0);
  EXPECT_EQ(due_steps(12, [&](int64_t s) { return log.due(s); }),
            (std::vector<int64_t>{4, 8, 10, 12}));
}

TEST(IntervalLog, NoMaxStepsNoExtraLine) {
  const train::IntervalLog log(nullptr, 0, /*max_steps=*/0, /*every=*/5, {}, 0);
  EXPECT_EQ(due_steps(12, [&](int64_t s) { return log.due(s); }), (std::vector<int64_t>{5, 10}));
}

using Clock = train::CheckpointSchedule::Clock;

TEST(CheckpointSchedule, EveryNStepsOrAsTheFlagsAsk) {
  const train::CheckpointSchedule schedule(/*every_steps=*/5, 0, Clock::now());
  EXPECT_EQ(due_steps(12, [&](int64_t s) { return schedule.due(s, {}); }),
            (std::vector<int64_t>{5, 10}));
  EXPECT_TRUE(schedule.due(7, train::StepFlags{/*preempt=*/true, false}));
  EXPECT_TRUE(schedule.due(7, train::StepFlags{false, /*save_time=*/true}));
  const train::CheckpointSchedule at_end_only(0, 0, Clock::now());
  EXPECT_TRUE(due_steps(12, [&](int64_t s) { return at_end_only.due(s, {}); }).empty());
}

TEST(CheckpointSchedule, ClockFromTheLastSave) {
  const Clock::time_point start = Clock::now();
  train::CheckpointSchedule schedule(0, /*every_minutes=*/2, start);
  EXPECT_FALSE(schedule.clock_due(start + std::chrono::seconds(119)));
  EXPECT_TRUE(schedule.clock_due(start + std::chrono::seconds(120)));
  schedule.saved(start + std::chrono::seconds(150));
  EXPECT_FALSE(schedule.clock_due(start + std::chrono::seconds(269)));
  EXPECT_TRUE(schedule.clock_due(start + std::chrono::seconds(270)));
  const train::CheckpointSchedule untimed(0, 0, start);
  EXPECT_FALSE(untimed.clock_due(start + std::chrono::hours(1000)));
}

}  // namespace
