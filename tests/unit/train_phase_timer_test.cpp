// PhaseTimer (train/phase_timer.h) on the CPU: each phase's time is at least
// its wall time, phases not entered are zero, take() starts afresh, and
// entering a phase beats the watchdog (a short watchdog does not fire while
// phases keep coming).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "trainer/train/phase_timer.h"

namespace {

using namespace std::chrono_literals;

TEST(PhaseTimer, SumsWallTimePerPhase) {
  train::Watchdog watchdog(0, 0);
  train::PhaseTimer phases(watchdog, torch::kCPU);
  for (int i = 0; i < 2; ++i) {
    auto scope = phases.enter(train::Phase::kForward, 1);
    std::this_thread::sleep_for(20ms);
  }
  {
    auto scope = phases.enter(train::Phase::kCommWait, 1);
    std::this_thread::sleep_for(10ms);
  }
  const auto seconds = phases.take();
  EXPECT_GE(seconds[static_cast<size_t>(train::Phase::kForward)], 0.040);
  EXPECT_GE(seconds[static_cast<size_t>(train::Phase::kCommWait)], 0.010);
  EXPECT_EQ(seconds[static_cast<size_t>(train::Phase::kData)], 0.0);
  EXPECT_EQ(seconds[static_cast<size_t>(train::Phase::kUpdate)], 0.0);
  EXPECT_EQ(phases.take()[static_cast<size_t>(train::Phase::kForward)], 0.0);
}

TEST(PhaseTimer, EnteringAPhaseBeatsTheWatchdog) {
  // 0.3 s timeout; 6 phases of 0.1 s each = 0.6 s in all: only the beats keep it quiet.
  train::Watchdog watchdog(0.3, 0);
  train::PhaseTimer phases(watchdog, torch::kCPU);
  for (int i = 0; i < 6; ++i) {
    auto scope = phases.enter(i % 2 ? train::Phase::kData : train::Phase::kUpdate, i);
    std::this_thread::sleep_for(100ms);
  }
  SUCCEED();  // a fired watchdog would have ended the process (exit 124)
}

}  // namespace
