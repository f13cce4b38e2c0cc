// The global batch: every example once per epoch, deterministic per
// (seed, epoch), independent of how it is split, within its token budget;
// the split into micro-batches covers the batch and is balanced.
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/batcher.h"

namespace {

using data::Batcher;
using data::GlobalBatch;

// 2000 examples with lengths 1..60 (a fixed draw), some above max_len.
data::ExampleLengths make_lengths() {
  std::mt19937_64 engine(42);
  data::ExampleLengths lengths;
  for (int i = 0; i < 2000; ++i) {
    lengths.src.push_back(1 + static_cast<int64_t>(engine() % 60));
    lengths.tgt.push_back(1 + static_cast<int64_t>(engine() % 60));
  }
  return lengths;
}

data::BatcherOptions make_options() {
  data::BatcherOptions options;
  options.batch_tokens = 500;
  options.max_len = 50;
  options.sort_window = 10;
  options.seed = 3;
  return options;
}

TEST(DataBatcher, EveryKeptExampleExactlyOncePerEpoch) {
  const auto lengths = make_lengths();
  const auto options = make_options();
  const Batcher batcher(lengths, options);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 2000; ++i) {
    if (std::max(lengths.src[i], lengths.tgt[i]) <= options.max_len) expected.push_back(i);
  }
  EXPECT_EQ(batcher.num_examples(), static_cast<int64_t>(expected.size()));
  EXPECT_EQ(batcher.num_skipped(), 2000 - static_cast<int64_t>(expected.size()));
  EXPECT_GT(batcher.num_skipped(), 0);
  for (const int64_t epoch : {0, 1, 5}) {
    std::vector<int64_t> seen;
    for (const auto& batch : batcher.epoch(epoch)) {
      EXPECT_FALSE(batch.empty());
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, expected) << "epoch " << epoch;
  }
}

TEST(DataBatcher, SameSeedAndEpochSameBatchesOtherEpochOtherOrder) {
  const auto lengths = make_lengths();
  const Batcher a(lengths, make_options());
  const Batcher b(lengths, make_options());  // e.g. on another rank, or after a restart
  EXPECT_EQ(a.epoch(2), b.epoch(2));
  EXPECT_NE(a.epoch(2), a.epoch(3));
  auto other_seed = make_options();
  other_seed.seed = 4;
  EXPECT_NE(a.epoch(2), Batcher(lengths, other_seed).epoch(2));
}

// A window is a sample of the whole split, not a stretch of it: an epoch
// does not train on the corpus in file order, one region after another.
TEST(DataBatcher, EachWindowSamplesTheWholeSplit) {
  const auto lengths = make_lengths();
  const Batcher batcher(lengths, make_options());
  ASSERT_GE(batcher.num_windows(), 8);
  for (int64_t w = 0; w < batcher.num_windows() - 1; ++w) {  // the last one may be small
    std::vector<int> per_quarter(4, 0);
    int64_t examples = 0;
    for (const auto& batch : batcher.window(0, w))
      for (const int64_t i : batch) {
        ++per_quarter[i * 4 / 2000];
        ++examples;
      }
    // Binomial(examples, 1/4) per quarter: expected examples / 4 with standard
    // deviation <= 5 here; a quarter below a tenth of the window would be
    // more than 6 deviations out (and the draw is fixed: no flakiness).
    for (int q = 0; q < 4; ++q) EXPECT_GT(per_quarter[q], examples / 10) << "window " << w;
  }
}

// Windows hold about sort_window × batch_tokens tokens: the window's batches
// are cut from its length-sorted examples, so a window of sort_window
// batches' worth keeps padding low while the order stays random.
TEST(DataBatcher, WindowsHoldAboutSortWindowBatchesOfTokens) {
  const auto lengths = make_lengths();
  const auto options = make_options();
  const Batcher batcher(lengths, options);
  for (int64_t w = 0; w < batcher.num_windows() - 1; ++w) {
    int64_t tokens = 0;
    for (const auto& batch : batcher.window(3, w))
      for (const int64_t i : batch) tokens += batcher.row_size(i);
    const double expected = static_cast<double>(options.sort_window * options.batch_tokens);
    EXPECT_GT(tokens, 0.7 * expected) << "window " << w;
    EXPECT_LT(tokens, 1.3 * expected) << "window " << w;
  }
}

TEST(DataBatcher, TokenBudgetRespectedAndPaddingSmall) {
  const auto lengths = make_lengths();
  const auto options = make_options();
  const Batcher batcher(lengths, options);
  int64_t real = 0;
  int64_t padded = 0;
  for (const auto& batch : batcher.epoch(0)) {
    int64_t longest = 0;
    for (const int64_t i : batch) {
      longest = std::max(longest, batcher.row_size(i));
      real += batcher.row_size(i);
    }
    const auto cost = static_cast<int64_t>(batch.size()) * longest;
    EXPECT_LE(cost, options.batch_tokens);
    padded += cost;
  }
  // Length bucketing keeps padding low (unsorted batches would waste ~40%).
  EXPECT_GT(static_cast<double>(real) / padded, 0.9);
}

// The micro-batches of every (world_size, accum_steps) with the same product
// of parts reassemble the same global batch: the data does not depend on how
// the work is distributed.
TEST(DataBatcher, SplitCoversTheBatchForAnyLayout) {
  const auto lengths = make_lengths();
  const Batcher batcher(lengths, make_options());
  for (const auto& batch : batcher.epoch(0)) {
    GlobalBatch sorted_batch = batch;
    std::sort(sorted_batch.begin(), sorted_batch.end());
    const std::vector<std::pair<int, int>> layouts = {{1, 4}, {2, 2}, {4, 1}, {3, 1}, {1, 1}};
    for (const auto& [world_size, accum_steps] : layouts) {
      const auto parts = batcher.split(batch, world_size * accum_steps);
      GlobalBatch joined;
      for (int rank = 0; rank < world_size; ++rank) {
        for (int step = 0; step < accum_steps; ++step) {
          const auto& part = parts.at(data::micro_batch_index(rank, step, world_size));
          joined.insert(joined.end(), part.begin(), part.end());
        }
      }
      std::sort(joined.begin(), joined.end());
      EXPECT_EQ(joined, sorted_batch) << world_size << " ranks x " << accum_steps << " steps";
    }
  }
}

TEST(DataBatcher, SplitIsBalancedByTargetTokens) {
  const auto lengths = make_lengths();
  const Batcher batcher(lengths, make_options());
  for (const auto& batch : batcher.epoch(1)) {
    int64_t heaviest_example = 0;
    for (const int64_t i : batch)
      heaviest_example = std::max(heaviest_example, batcher.target_tokens(i));
    for (const int64_t parts : {2, 3, 4, 8}) {
      std::vector<int64_t> load;
      for (const auto& part : batcher.split(batch, parts)) {
        int64_t tokens = 0;
        for (const int64_t i : part) tokens += batcher.target_tokens(i);
        load.push_back(tokens);
      }
      const auto [lightest, heaviest] = std::minmax_element(load.begin(), load.end());
      EXPECT_LE(*heaviest - *lightest, heaviest_example) << parts << " parts";
    }
  }
}

TEST(DataBatcher, SplitIntoMorePartsThanExamplesLeavesEmptyParts) {
  const auto lengths = make_lengths();
  const Batcher batcher(lengths, make_options());
  const GlobalBatch batch = {5, 9, 2};
  const auto parts = batcher.split(batch, 5);
  ASSERT_EQ(parts.size(), 5u);
  int64_t filled = 0;
  for (const auto& part : parts) {
    EXPECT_LE(part.size(), 1u);
    filled += static_cast<int64_t>(part.size());
  }
  EXPECT_EQ(filled, 3);
  EXPECT_EQ(batcher.split(batch, 5), parts);  // deterministic
  EXPECT_TRUE(batcher.split({}, 2)[0].empty());
}

TEST(DataBatcher, RejectsUnusableOptions) {
  auto options = make_options();
  options.batch_tokens = options.max_len;
  const auto lengths = make_lengths();
  EXPECT_THROW(Batcher(lengths, options), std::invalid_argument);
  data::ExampleLengths too_long;  // nothing fits
  too_long.src = {60};
  too_long.tgt = {60};
  EXPECT_THROW(Batcher(too_long, make_options()), std::invalid_argument);
}

}  // namespace
