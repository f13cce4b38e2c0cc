// The rank that lags (trainer/train/slow_ranks.h), on hand-computed cases.
#include <gtest/gtest.h>

#include <vector>

#include "trainer/train/slow_ranks.h"

namespace {

TEST(SlowRanks, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(train::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(train::median({4, 1, 3, 2}), 2.5);  // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(train::median({7}), 7);
}

// Ranks 0..3 compute 1.0, 1.1, 2.0 and 0.9 s: the median is (1.0 + 1.1) / 2
// = 1.05, and 2.0 / 1.05 = 1.905 >= 1.3; 1.1 / 1.05 = 1.048 is not.
TEST(SlowRanks, NamesTheRankAtTheFactorOrMore) {
  const auto slow = train::slow_ranks({1.0, 1.1, 2.0, 0.9}, 1.3);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 2);
  EXPECT_NEAR(slow[0].ratio, 2.0 / 1.05, 1e-12);
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

// Two ranks, one 2x the other: median 1.5, 2 / 1.5 = 1.33 >= 1.3.
TEST(SlowRanks, OneOfTwo) {
  const auto slow = train::slow_ranks({1, 2}, 1.3);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].rank, 1);
}

TEST(SlowRanks, NoneWhenOffAloneOrAlike) {
  EXPECT_TRUE(train::slow_ranks({1, 5, 1}, 0).empty());  // factor 0: off
  EXPECT_TRUE(train::slow_ranks({5}, 1.3).empty());      // one rank: nothing to compare
  EXPECT_TRUE(train::slow_ranks({1, 1.2, 0.9, 1.1}, 1.3).empty());
  EXPECT_TRUE(train::slow_ranks({0, 0, 0}, 1.3).empty());  // no time measured
}

}  // namespace
