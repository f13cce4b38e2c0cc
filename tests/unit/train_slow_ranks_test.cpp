// The rank that lags (trainer/train/slow_ranks.h), on hand-computed cases.
#include <gtest/gtest.h>

#include <vector>

#include "trainer/train/slow_ranks.h"

namespace {

TEST(SlowRanks, LowerMedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(train::lower_median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(train::lower_median({4, 1, 3, 2}), 2);  // the lower of 2 and 3
  EXPECT_DOUBLE_EQ(train::lower_median({7}), 7);
}

// Ranks 0..3 compute 1.0, 1.1, 2.0 and 0.9 s: the lower median is 1.0, and
// 2.0 / 1.0 = 2 >= 1.3; 1.1 / 1.0 = 1.1 is not.
TEST(SlowRanks, NamesTheRankAtTheFactorOrMore) {
  const auto slow = train::slow_ranks({1.0, 1.1, 2.0, 0.9}, 1.3);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 2);
  EXPECT_DOUBLE_EQ(slow[0].ratio, 2.0);
}

// One node of two slow: ranks 2 and 3 at 1.5x. The lower median is a fast
// rank's 1.0, so both are named (the middle of the two middle values, 1.25,
// would give 1.2: never named at 1.3).
TEST(SlowRanks, HalfTheRanksSlow) {
  const auto slow = train::slow_ranks({1, 1, 1.5, 1.5}, 1.3);
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_DOUBLE_EQ(slow[0].ratio, 1.5);
  EXPECT_DOUBLE_EQ(slow[1].ratio, 1.5);
}

// Exactly at the factor counts (>=); two slow ranks, the slowest first.
TEST(SlowRanks, AtTheFactorCountsAndTheSlowestComesFirst) {
  // median of {1, 1, 1, 1.3, 2} is 1: 1.3 is at the factor, 2 above it
  const auto slow = train::slow_ranks({1.3, 1, 2, 1, 1}, 1.3);
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0].rank, 2);
  EXPECT_EQ(slow[1].rank, 0);
  EXPECT_DOUBLE_EQ(slow[1].ratio, 1.3);
}

// Two ranks, one 1.4x the other: the lower median is the faster's 1.
TEST(SlowRanks, OneOfTwo) {
  const auto slow = train::slow_ranks({1, 1.4}, 1.3);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 1);
  EXPECT_DOUBLE_EQ(slow[0].ratio, 1.4);
}

TEST(SlowRanks, NoneWhenOffAloneOrAlike) {
  EXPECT_TRUE(train::slow_ranks({1, 5, 1}, 0).empty());  // factor 0: off
  EXPECT_TRUE(train::slow_ranks({5}, 1.3).empty());      // one rank: nothing to compare
  EXPECT_TRUE(train::slow_ranks({1, 1.2, 0.9, 1.1}, 1.3).empty());
  EXPECT_TRUE(train::slow_ranks({0, 0, 0}, 1.3).empty());  // no time measured
}

}  // namespace
