// decode_rows_in_parallel: which rows each thread decodes, how the answers
// come back in row order, LibTorch's thread count, the caller's grad mode,
// and a share's error; by a stand-in decoder whose answer for a row is the
// row itself.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "trainer/eval/rows_in_parallel.h"

namespace {

constexpr int64_t kPad = 0;

// Rows of lengths 1..count (token b + 1 repeated), right-padded -> [count, count + 2].
torch::Tensor rows_of_lengths(int64_t count) {
  auto src = torch::full({count, count + 2}, kPad, torch::kLong);
  for (int64_t b = 0; b < count; ++b) src[b].slice(0, 0, b + 1).fill_(b + 1);
  return src;
}

// A share's "decoding": each of its rows as it came, padding included.
eval::TokenSequences rows_as_given(const torch::Tensor& share) {
  eval::TokenSequences out;
  const auto rows = share.contiguous();
  for (int64_t b = 0; b < rows.size(0); ++b) {
    std::vector<int32_t> row;
    for (int64_t s = 0; s < rows.size(1); ++s) row.push_back(rows[b][s].item<int32_t>());
    out.push_back(row);
  }
  return out;
}

// Each test starts with 2 LibTorch threads and leaves the count it found.
class DecodeRowsInParallel : public ::testing::Test {
 protected:
  void SetUp() override { torch::set_num_threads(2); }
  void TearDown() override { torch::set_num_threads(before_); }

 private:
  int before_ = torch::get_num_threads();
};

TEST_F(DecodeRowsInParallel, EachRowOnceInRowOrderCutToItsSharesLongestSource) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<int64_t> share_threads;  // LibTorch's thread count inside each share
  std::vector<bool> share_grad_mode;
  torch::NoGradGuard no_grad;  // the caller's; each share decodes as it
  const auto out =
      eval::decode_rows_in_parallel(rows_of_lengths(7), kPad, 3, [&](const torch::Tensor& share) {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
        share_threads.push_back(torch::get_num_threads());
        share_grad_mode.push_back(torch::GradMode::is_enabled());
        return rows_as_given(share);
      });
  ASSERT_EQ(out.size(), 7u);
  // Shares of rows {0, 3, 6}, {1, 4}, {2, 5}: widths 7, 5 and 6 (their
  // longest rows' lengths).
  const std::vector<int64_t> width = {7, 5, 6};
  for (int64_t b = 0; b < 7; ++b) {
    std::vector<int32_t> expected(width[b % 3], kPad);
    std::fill(expected.begin(), expected.begin() + b + 1, static_cast<int32_t>(b + 1));
    EXPECT_EQ(out[b], expected) << "row " << b;
  }
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_EQ(share_threads, std::vector<int64_t>(3, 1));
  EXPECT_EQ(share_grad_mode, std::vector<bool>(3, false));
  EXPECT_EQ(torch::get_num_threads(), 2);  // the count before the call
}

TEST_F(DecodeRowsInParallel, NoMoreSharesThanRows) {
  int64_t shares = 0;
  std::mutex mutex;
  const auto out =
      eval::decode_rows_in_parallel(rows_of_lengths(2), kPad, 4, [&](const torch::Tensor& share) {
        std::lock_guard<std::mutex> lock(mutex);
        ++shares;
        EXPECT_EQ(share.size(0), 1);
        return rows_as_given(share);
      });
  EXPECT_EQ(shares, 2);
  EXPECT_EQ(out, (eval::TokenSequences{{1}, {2, 2}}));
}

TEST_F(DecodeRowsInParallel, AShareErrorComesBackAfterEveryShareEnded) {
  for (const int bad : {0, 1}) {  // this thread's share, another thread's
    std::mutex mutex;
    int64_t ended = 0;
    const auto decode = [&](const torch::Tensor& share) {
      const auto out = rows_as_given(share);
      std::lock_guard<std::mutex> lock(mutex);
      ++ended;
      if (out[0][0] == bad + 1) throw std::runtime_error("bad share");  // rows {bad, bad + 2}
      return out;
    };
    EXPECT_THROW(eval::decode_rows_in_parallel(rows_of_lengths(4), kPad, 2, decode),
                 std::runtime_error)
        << "share " << bad;
    EXPECT_EQ(ended, 2) << "share " << bad;
    EXPECT_EQ(torch::get_num_threads(), 2) << "share " << bad;
  }
}

TEST_F(DecodeRowsInParallel, AShareOfTheWrongLengthIsRefused) {
  EXPECT_THROW(
      eval::decode_rows_in_parallel(rows_of_lengths(4), kPad, 2,
                                    [](const torch::Tensor&) { return eval::TokenSequences(3); }),
      std::logic_error);
}

}  // namespace
