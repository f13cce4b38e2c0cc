// NumericsGuard: a step with a non-finite loss or gradient norm is skipped;
// the max_in_a_row-th such step in a row ends the run with an error naming
// the step, the count and the setting; a finite step resets the count.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "tests/unit/error_message.h"
#include "trainer/train/numerics_guard.h"

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(NumericsGuard, FiniteStepsAreApplied) {
  train::NumericsGuard guard(3);
  EXPECT_TRUE(guard.accept(1, 2.5, 0.75));
  EXPECT_TRUE(guard.accept(2, 0.0, 0.0));
  EXPECT_TRUE(guard.accept(3, 1e300, std::numeric_limits<double>::max()));
  EXPECT_EQ(guard.in_a_row(), 0);
}

TEST(NumericsGuard, NanOrInfinityInEitherValueIsSkipped) {
  train::NumericsGuard guard(100);
  EXPECT_FALSE(guard.accept(1, kNan, 1.0));
  EXPECT_FALSE(guard.accept(2, 1.0, kNan));
  EXPECT_FALSE(guard.accept(3, kInf, 1.0));
  EXPECT_FALSE(guard.accept(4, 1.0, -kInf));
  EXPECT_EQ(guard.in_a_row(), 4);
}

TEST(NumericsGuard, AFiniteStepResetsTheCount) {
  train::NumericsGuard guard(2);
  for (int64_t step = 1; step <= 10; step += 2) {
    EXPECT_FALSE(guard.accept(step, kNan, 1.0));
    EXPECT_EQ(guard.in_a_row(), 1);
    EXPECT_TRUE(guard.accept(step + 1, 1.0, 1.0));
    EXPECT_EQ(guard.in_a_row(), 0);
  }
}

TEST(NumericsGuard, TheLimitInARowEndsTheRunNamingStepAndSetting) {
  train::NumericsGuard guard(3);
  EXPECT_FALSE(guard.accept(7, kNan, 1.0));
  EXPECT_FALSE(guard.accept(8, 1.0, kInf));
  const std::string message = test_util::error_of([&] { guard.accept(9, kNan, kNan); });
  test_util::expect_mentions(
      message, {"step 9", "3 non-finite steps in a row", "train.max_nonfinite_steps"});
  EXPECT_THROW(guard.accept(9, kNan, kNan), std::runtime_error);
}

TEST(NumericsGuard, ALimitOfOneEndsAtTheFirst) {
  train::NumericsGuard guard(1);
  EXPECT_TRUE(guard.accept(1, 1.0, 1.0));
  test_util::expect_mentions(test_util::error_of([&] { guard.accept(2, kInf, 1.0); }),
                             {"step 2", "non-finite", "train.max_nonfinite_steps"});
}

}  // namespace
