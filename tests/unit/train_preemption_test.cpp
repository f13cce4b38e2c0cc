// Preemption signals (train/preemption.h): the first USR1 or TERM is a
// request, a second one exits at once with 128 + signal, and once the outcome
// is settled (the preemption's checkpoint saved) with that outcome's code, so
// that a launcher's TERM to ranks still shutting down does not turn a clean
// preemption (75) into a failure (143). Signals are raised in death tests'
// child processes.
#include <gtest/gtest.h>

#include <csignal>

#include "trainer/train/exit_codes.h"
#include "trainer/train/preemption.h"

namespace {

TEST(PreemptionSignals, TheFirstSignalIsARequest) {
  const train::PreemptionSignals signals;
  EXPECT_FALSE(signals.requested());
  std::raise(SIGUSR1);
  EXPECT_TRUE(signals.requested());
  EXPECT_EQ(signals.signal(), SIGUSR1);
}

TEST(PreemptionSignalsDeathTest, ASecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        const train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(128 + SIGTERM), "");
}

TEST(PreemptionSignalsDeathTest, OnceSettledASecondSignalExitsWithTheOutcome) {
  EXPECT_EXIT(
      {
        train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        signals.settle(train::kExitPreempted);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(train::kExitPreempted), "");
}

}  // namespace
