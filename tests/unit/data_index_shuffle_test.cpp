// The shuffle that orders an epoch without holding it: a bijection on
// [0, n) for every n, another order for another seed, and orders that look
// uniformly random (checked with chi-square tests on fixed draws).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/index_shuffle.h"

namespace {

std::vector<uint64_t> order(uint64_t n, uint64_t seed) {
  const data::IndexShuffle shuffle(n, seed);
  std::vector<uint64_t> out(n);
  for (uint64_t k = 0; k < n; ++k) out[k] = shuffle(k);
  return out;
}

TEST(IndexShuffle, IsAPermutationForEverySize) {
  for (const uint64_t n : {1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 1000, 4097, 100003}) {
    auto values = order(n, 11);
    std::sort(values.begin(), values.end());
    std::vector<uint64_t> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(values, expected) << "n = " << n;
  }
}

TEST(IndexShuffle, SameSeedSameOrderOtherSeedOtherOrder) {
  EXPECT_EQ(order(1000, 3), order(1000, 3));
  EXPECT_NE(order(1000, 3), order(1000, 4));
  EXPECT_THROW(data::IndexShuffle(0, 1), std::invalid_argument);
  EXPECT_THROW(data::IndexShuffle(5, 1)(5), std::out_of_range);
}

// Chi-square statistic of observed counts against equal expected counts.
double chi_square(const std::vector<int>& counts, double expected) {
  double statistic = 0;
  for (const int c : counts) statistic += (c - expected) * (c - expected) / expected;
  return statistic;
}

// Over 24000 seeds, the ordered pair (order(0), order(1)) of n = 5 takes each
// of its 20 values equally often, as a uniform shuffle's does. The 0.1%
// critical value of chi-square with 19 degrees of freedom is 43.8; the
// seeds are fixed, so the outcome is too.
TEST(IndexShuffle, FirstTwoPositionsAreUniformOverSeeds) {
  std::map<std::pair<uint64_t, uint64_t>, int> seen;
  const int draws = 24000;
  for (int seed = 0; seed < draws; ++seed) {
    const data::IndexShuffle shuffle(5, static_cast<uint64_t>(seed));
    ++seen[{shuffle(0), shuffle(1)}];
  }
  ASSERT_EQ(seen.size(), 20u);
  std::vector<int> counts;
  for (const auto& [pair, count] : seen) counts.push_back(count);
  EXPECT_LT(chi_square(counts, draws / 20.0), 43.8);
}

// Within one large order, neighbouring positions hold unrelated examples:
// for a uniform shuffle |order(k+1) - order(k)| averages (n + 1) / 3, and
// order(k) falls in each of 100 ranges equally often (chi-square, 99
// degrees of freedom, 0.1% critical value 148.2) for the first 10% of k.
TEST(IndexShuffle, NeighboursAreUnrelatedAndPrefixesUniform) {
  const uint64_t n = 1000003;  // the network permutes 4^10 = 1048576 values: some cycle walking
  const auto values = order(n, 7);
  double gap = 0;
  for (uint64_t k = 0; k + 1 < n; ++k)
    gap += std::abs(static_cast<double>(values[k + 1]) - static_cast<double>(values[k]));
  gap /= static_cast<double>(n - 1);
  EXPECT_NEAR(gap / ((n + 1) / 3.0), 1.0, 0.01);
  std::vector<int> counts(100, 0);
  for (uint64_t k = 0; k < n / 10; ++k) ++counts[values[k] * 100 / n];
  EXPECT_LT(chi_square(counts, static_cast<double>(n / 10) / 100), 148.2);
}

}  // namespace
