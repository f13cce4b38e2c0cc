// A step's outcome on its way to the host (train/step.h) and its reading a
// step late (train/step_outcomes.h): every named number arrives under its own
// name, the flags as booleans; a queued record is read when the next one is
// queued or when settled, and the flags the ranks agreed on stay until acted on.
#include <gtest/gtest.h>

#include <limits>

#include "trainer/train/step.h"
#include "trainer/train/step_outcomes.h"

namespace {

// An outcome as the device would leave it: each number distinct, so that one
// read under another's name shows.
train::StepOutcome outcome(double preempt, double save_time, double skipped, double overflowed = 0,
                           double writing = 0, double failed = 0) {
  train::StepSums sums(torch::kCPU);
  sums.smoothed.fill_(30.5);
  sums.nll.fill_(20.25);
  sums.tokens.fill_(10);
  sums.squares.fill_(9);
  sums.preempt.fill_(preempt);
  sums.save_time.fill_(save_time);
  sums.checkpoint_writing.fill_(writing);
  sums.checkpoint_failed.fill_(failed);
  const auto scalar = [](double v) { return torch::tensor(v, torch::kDouble); };
  return train::StepOutcome{sums, scalar(3), scalar(skipped), scalar(overflowed), scalar(1024)};
}

TEST(StepRecord, EveryNumberUnderItsName) {
  const train::StepResult r = train::StepRecord(7, outcome(0, 2, 0)).read();
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.smoothed_sum, 30.5);
  EXPECT_EQ(r.nll_sum, 20.25);
  EXPECT_EQ(r.tokens, 10);
  EXPECT_EQ(r.grad_norm, 3);  // the norm, not the sum of squares
  EXPECT_TRUE(r.updated);
  EXPECT_FALSE(r.overflowed);
  EXPECT_EQ(r.loss_scale, 1024);
  EXPECT_FALSE(r.flags.preempt);
  EXPECT_TRUE(r.flags.save_time);  // raised by 2 ranks
  EXPECT_FALSE(r.flags.checkpoint_writing);
  EXPECT_FALSE(r.flags.checkpoint_failed);
}

TEST(StepRecord, SkippedAndOverflowed) {
  const train::StepResult r = train::StepRecord(8, outcome(1, 0, 1, 1)).read();
  EXPECT_FALSE(r.updated);
  EXPECT_TRUE(r.overflowed);
  EXPECT_TRUE(r.flags.preempt);
  EXPECT_FALSE(r.flags.save_time);
  const train::StepResult c = train::StepRecord(9, outcome(0, 0, 0, 0, 3, 1)).read();
  EXPECT_TRUE(c.flags.checkpoint_writing);  // 3 ranks still writing
  EXPECT_TRUE(c.flags.checkpoint_failed);
  EXPECT_FALSE(c.flags.preempt);
}

TEST(StepRecord, SumsAreViewsOfTheCollectivesBuffer) {
  train::StepSums sums(torch::kCPU);
  sums.nll += 4;
  sums.preempt += 1;
  EXPECT_EQ(sums.all.sizes(), torch::IntArrayRef({8}));
  EXPECT_EQ(sums.all.sum().item<double>(), 5);
  sums.all.mul_(2);  // as the allreduce writes it
  EXPECT_EQ(sums.nll.item<double>(), 8);
}

struct Reading : ::testing::Test {
  train::Watchdog watchdog{0, 0};  // timeout 0: no watching
  train::NumericsGuard guard{3};
  train::IntervalLog log{nullptr, 0, 0, 1, {}, 0};
  train::StepOutcomes outcomes{watchdog, guard, log};
};

TEST_F(Reading, QueuedRecordIsReadWhenTheNextIsQueued) {
  outcomes.queue(train::StepRecord(1, outcome(1, 0, 0)));
  EXPECT_EQ(log.sums().steps, 0);
  EXPECT_FALSE(outcomes.agreed().preempt);
  outcomes.queue(train::StepRecord(2, outcome(0, 0, 0)));
  EXPECT_EQ(log.sums().steps, 1);
  EXPECT_TRUE(outcomes.agreed().preempt);
  outcomes.settle();
  EXPECT_EQ(log.sums().steps, 2);
  EXPECT_EQ(log.sums().tokens, 20);
  outcomes.settle();  // nothing left to read
  EXPECT_EQ(log.sums().steps, 2);
  EXPECT_TRUE(outcomes.agreed().preempt);  // a preemption stays
}

TEST_F(Reading, TimedSaveFlagStaysUntilDone) {
  outcomes.queue(train::StepRecord(1, outcome(0, 1, 0)));
  outcomes.settle();
  EXPECT_TRUE(outcomes.agreed().save_time);
  outcomes.queue(train::StepRecord(2, outcome(0, 0, 0)));
  outcomes.settle();
  EXPECT_TRUE(outcomes.agreed().save_time);
  outcomes.checkpoint_began();
  EXPECT_FALSE(outcomes.agreed().save_time);
}

// Written: as the last step read since the checkpoint began says (a rank's
// write, once done, stays done); a failure stays until acted on.
TEST_F(Reading, CheckpointWrittenAsTheLastStepReadSays) {
  outcomes.checkpoint_began();
  EXPECT_TRUE(outcomes.agreed().checkpoint_writing);
  outcomes.queue(train::StepRecord(1, outcome(0, 0, 0, 0, /*writing=*/2)));
  outcomes.settle();
  EXPECT_TRUE(outcomes.agreed().checkpoint_writing);
  outcomes.queue(train::StepRecord(2, outcome(0, 0, 0, 0, /*writing=*/0)));
  outcomes.settle();
  EXPECT_FALSE(outcomes.agreed().checkpoint_writing);
  outcomes.checkpoint_began();  // the next save
  EXPECT_TRUE(outcomes.agreed().checkpoint_writing);
  EXPECT_FALSE(outcomes.agreed().checkpoint_failed);
  outcomes.queue(train::StepRecord(3, outcome(0, 0, 0, 0, 0, /*failed=*/1)));
  outcomes.queue(train::StepRecord(4, outcome(0, 0, 0)));
  outcomes.settle();
  EXPECT_TRUE(outcomes.agreed().checkpoint_failed);
}

TEST_F(Reading, NonFiniteStepsGoToTheGuardOverflowsDoNot) {
  train::StepOutcome diverged = outcome(0, 0, 1);
  diverged.sums.smoothed.fill_(std::numeric_limits<double>::quiet_NaN());
  outcomes.queue(train::StepRecord(1, diverged));
  outcomes.queue(train::StepRecord(2, outcome(0, 0, 1, /*overflowed=*/1)));
  outcomes.settle();
  EXPECT_EQ(guard.in_a_row(), 1);  // the overflow is the loss scale's, not the guard's
  EXPECT_EQ(log.sums().steps, 0);  // the log counts updated steps only
}

}  // namespace
