// The plan of micro-batches: whatever the world size and accumulation, the
// ranks together train the same global batches step by step; every rank has
// the same number of micro-batches; resuming at a step's position (or, for a
// position saved before windows, at its cursor) gives the same micro-batches
// as iterating there; a plan crosses windows and epochs; it ends at
// max_steps or max_epochs. The examples ledger: SHA-256 as Python's hashlib
// computes it, the same for any world size, accumulation and resume.
#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/batch_plan.h"
#include "tests/unit/run_command.h"
#include "tests/unit/test_paths.h"

namespace {

data::ExampleLengths lengths(int n) {
  std::mt19937_64 engine(7);
  data::ExampleLengths l;
  for (int i = 0; i < n; ++i) {
    l.src.push_back(1 + static_cast<int64_t>(engine() % 30));
    l.tgt.push_back(1 + static_cast<int64_t>(engine() % 30));
  }
  return l;
}

// Batches of at most batch_tokens, from windows of sort_window batches' tokens.
data::Batcher batcher(const data::ExampleLengths& l, int64_t max_len = 40,
                      int64_t sort_window = data::BatcherOptions().sort_window,
                      int64_t batch_tokens = 300) {
  data::BatcherOptions options;
  options.batch_tokens = batch_tokens;
  options.max_len = max_len;
  options.sort_window = sort_window;
  options.seed = 5;
  return data::Batcher(l, options);
}

// A plan's micro-batches in order, each with its step's position.
struct Item {
  data::PlanPosition after;  // of the item's step
  int64_t accum, part;
  data::GlobalBatch indices;
};

std::vector<Item> all(data::BatchPlan plan) {
  std::vector<Item> items;
  while (auto next = plan.next_step())
    for (const auto& m : next->micro_batches)
      items.push_back({next->after(), m.accum, m.part, m.indices});
  return items;
}

// step -> the sorted union of the examples all ranks train at that step.
std::map<int64_t, std::vector<int64_t>> steps_of(const data::Batcher& b, int64_t world,
                                                 int64_t accum, int64_t max_steps) {
  std::map<int64_t, std::vector<int64_t>> steps;
  size_t count = 0;
  for (int64_t rank = 0; rank < world; ++rank) {
    const auto items = all(data::BatchPlan(b, {world, rank, accum, max_steps, 0}));
    if (rank == 0) count = items.size();
    EXPECT_EQ(items.size(), count) << "rank " << rank << " has another number of micro-batches";
    for (const auto& item : items)
      steps[item.after.step].insert(steps[item.after.step].end(), item.indices.begin(),
                                    item.indices.end());
  }
  for (auto& [step, examples] : steps) std::sort(examples.begin(), examples.end());
  return steps;
}

TEST(BatchPlan, SameGlobalBatchesForAnyWorldSizeAndAccumulation) {
  const auto l = lengths(257);  // ~7 global batches an epoch: 40 steps cross epochs
  const auto b = batcher(l);
  const auto reference = steps_of(b, 1, 1, 40);
  ASSERT_EQ(reference.size(), 40u);
  for (int64_t world : {1, 2, 3})
    for (int64_t accum : {1, 2})
      EXPECT_EQ(steps_of(b, world, accum, 40), reference) << world << " x " << accum;
}

// Resumed after each step k (2 micro-batches a step), at the saved position,
// or, as a checkpoint from before windows, at its epoch and cursor only.
void expect_resumes_like_iterating(const data::Batcher& b, int64_t steps) {
  const data::PlanOptions options{2, 1, 2, steps, 0};
  const auto full = all(data::BatchPlan(b, options));
  ASSERT_EQ(static_cast<int64_t>(full.size()), 2 * steps);
  for (int64_t k = 1; k < steps; ++k) {
    const data::PlanPosition saved = full[2 * k - 1].after;  // the last micro-batch of step k
    data::PlanPosition legacy = saved;
    legacy.window = -1;
    for (const auto& start : {saved, legacy}) {
      const auto resumed = all(data::BatchPlan(b, options, start));
      ASSERT_EQ(resumed.size(), full.size() - 2 * k) << k;
      for (size_t i = 0; i < resumed.size(); ++i) {
        EXPECT_EQ(resumed[i].after.step, full[2 * k + i].after.step);
        EXPECT_EQ(resumed[i].after.cursor, full[2 * k + i].after.cursor);
        EXPECT_EQ(resumed[i].part, full[2 * k + i].part);
        EXPECT_EQ(resumed[i].indices, full[2 * k + i].indices) << "after step " << k;
      }
    }
  }
}

TEST(BatchPlan, ResumingAtAStepsPositionEqualsIteratingToIt) {
  const auto l = lengths(257);
  expect_resumes_like_iterating(batcher(l), 30);
}

TEST(BatchPlan, ResumingAcrossWindowsEqualsIteratingToIt) {
  const auto l = lengths(257);
  // max_len 25: some examples skipped, windows of unequal batch counts
  const data::Batcher b = batcher(l, /*max_len=*/25, /*sort_window=*/2);
  ASSERT_GE(b.num_windows(), 5);
  expect_resumes_like_iterating(b, 40);  // into the second epoch
}

// A position saved under other data settings (more windows, a longer
// window) is said to be moved, and where to; one that fits is not.
TEST(BatchPlan, APositionBeyondTheWindowsIsSaidToMove) {
  const auto l = lengths(257);
  const data::Batcher b = batcher(l, /*max_len=*/40, /*sort_window=*/2);
  const int64_t last = b.num_windows() - 1;
  const auto size = static_cast<int64_t>(b.window(1, last).size());
  EXPECT_EQ(data::position_moved(b, {30, 1, last, size, 0}), "");
  EXPECT_EQ(data::position_moved(b, {30, 1, -1, 0, 12}), "");  // from before windows
  const std::string beyond = data::position_moved(b, {30, 1, last + 3, 2, 0});
  EXPECT_NE(beyond.find("window " + std::to_string(last + 3) + " of epoch 1"), std::string::npos)
      << beyond;
  EXPECT_NE(beyond.find("at batch 2 of window " + std::to_string(last)), std::string::npos)
      << beyond;
  EXPECT_NE(data::position_moved(b, {30, 1, last, size + 5, 0}).find("at batch " +
                                                                      std::to_string(size)),
            std::string::npos);
}

// Windows of about one example's tokens, most examples too long: many
// windows keep nothing and yield no batch; the plan passes over them.
TEST(BatchPlan, PassesOverWindowsWithoutBatches) {
  const auto l = lengths(2000);  // ~4% within max_len
  const data::Batcher b = batcher(l, /*max_len=*/6, /*sort_window=*/1, /*batch_tokens=*/8);
  int64_t empty = 0, per_epoch = 0;
  for (int64_t w = 0; w < b.num_windows(); ++w) {
    const auto batches = b.window(0, w).size();
    empty += batches == 0;
    per_epoch += static_cast<int64_t>(batches);
  }
  ASSERT_GT(empty, 5);
  expect_resumes_like_iterating(b, per_epoch + 3);  // into the second epoch
}

TEST(BatchPlan, HandsOutOneStepAtATime) {
  const auto l = lengths(257);
  const auto b = batcher(l);
  data::BatchPlan plan(b, {3, 2, 4, 12, 0});
  for (int64_t step = 1; step <= 12; ++step) {
    const auto next = plan.next_step();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->step, step);
    ASSERT_EQ(next->micro_batches.size(), 4u);
    for (int64_t a = 0; a < 4; ++a) {
      EXPECT_EQ(next->micro_batches[a].accum, a);
      EXPECT_EQ(next->micro_batches[a].part, data::micro_batch_index(2, a, 3));
    }
  }
  EXPECT_FALSE(plan.next_step().has_value());
}

TEST(BatchPlan, EndsAtMaxStepsOrMaxEpochs) {
  const auto l = lengths(257);
  const auto b = batcher(l);
  const int64_t per_epoch = static_cast<int64_t>(b.epoch(0).size());
  EXPECT_EQ(all(data::BatchPlan(b, {1, 0, 1, 5, 0})).back().after.step, 5);
  const auto two_epochs = all(data::BatchPlan(b, {1, 0, 1, 0, 2}));
  EXPECT_EQ(static_cast<int64_t>(two_epochs.size()), 2 * per_epoch);
  EXPECT_EQ(two_epochs.back().after.epoch, 1);
}

// ledger_1 = SHA-256("" || 5, 7 as int64 little-endian), ledger_2 =
// SHA-256(ledger_1's hex || 9): Python's hashlib, a reference outside this code.
TEST(BatchPlan, LedgerIsTheSha256ChainPythonComputes) {
  const std::string one = data::extend_ledger("", {5, 7});
  const std::string two = data::extend_ledger(one, {9});
  const auto python = test_util::run_command(
      test_paths::python() +
      " -c 'import hashlib, struct\n"
      "one = hashlib.sha256(struct.pack(\"<2q\", 5, 7)).hexdigest()\n"
      "print(one + \" \" + hashlib.sha256(one.encode() + struct.pack(\"<q\", 9)).hexdigest())'");
  ASSERT_EQ(python.status, 0) << python.output;
  EXPECT_EQ(one + " " + two + "\n", python.output);
}

// Every rank of any world size and accumulation, and a plan resumed at any
// step's position, carries the ledger of one rank iterating from the start.
TEST(BatchPlan, LedgerIsTheSameForAnyWorldSizeAndResume) {
  const auto l = lengths(257);  // the batcher reads it
  const auto b = batcher(l);
  const auto reference = all(data::BatchPlan(b, {1, 0, 1, 30, 0}));
  std::map<int64_t, std::string> ledger;  // step -> the ledger after it
  for (const auto& item : reference) ledger[item.after.step] = item.after.ledger;
  ASSERT_EQ(ledger.size(), 30u);
  EXPECT_NE(ledger[29], ledger[30]);
  for (int64_t world : {2, 3})
    for (int64_t rank = 0; rank < world; ++rank)
      for (const auto& item : all(data::BatchPlan(b, {world, rank, 2, 30, 0})))
        EXPECT_EQ(item.after.ledger, ledger[item.after.step]) << world << " ranks, rank " << rank;
  for (const int64_t k : {1, 9, 17}) {
    const data::PlanPosition saved = reference[static_cast<size_t>(k - 1)].after;
    for (const auto& item : all(data::BatchPlan(b, {2, 1, 1, 30, 0}, saved)))
      EXPECT_EQ(item.after.ledger, ledger[item.after.step]) << "resumed after step " << k;
  }
}

}  // namespace
