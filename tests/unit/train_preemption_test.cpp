// Preemption signals (train/preemption.h): the first USR1 or TERM is a
// request, a second one exits at once with 128 + signal, and once the outcome
// is settled (the preemption's checkpoint saved) with that outcome's code, so
// that a launcher's TERM to ranks still shutting down does not turn a clean
// preemption (75) into a failure (143). A second signal while a checkpoint is
// written is held until it is (a third exits at once). Signals are raised in
// death tests' child processes.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

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

TEST(PreemptionSignalsDeathTest, ASecondSignalDuringASaveIsHeldUntilItIsWritten) {
  EXPECT_EXIT(
      {
        train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        signals.begin_save();
        std::raise(SIGTERM);  // held: the process goes on
        if (signals.end_save(train::kExitPreempted) != SIGTERM) std::_Exit(1);
        std::_Exit(42);  // past the save: the held signal did not end the process
      },
      testing::ExitedWithCode(42), "");
}

TEST(PreemptionSignalsDeathTest, OnceTheStopsCheckpointIsWrittenASignalExitsWithItsCode) {
  EXPECT_EXIT(
      {
        train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        signals.begin_save();
        signals.end_save(train::kExitPreempted);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(train::kExitPreempted), "");
}

TEST(PreemptionSignalsDeathTest, AThirdSignalDuringASaveExitsAtOnce) {
  EXPECT_EXIT(
      {
        train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        signals.begin_save();
        std::raise(SIGTERM);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(128 + SIGTERM), "");
}

TEST(PreemptionSignalsDeathTest, AfterASaveThatDoesNotSettleASecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        train::PreemptionSignals signals;
        std::raise(SIGUSR1);
        signals.begin_save();
        signals.end_save(-1);
        std::raise(SIGTERM);
      },
      testing::ExitedWithCode(128 + SIGTERM), "");
}

}  // namespace
