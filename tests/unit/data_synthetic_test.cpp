// Synthetic copy/reverse tasks: deterministic per seed, correct targets,
// lengths and symbols within their options.
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/prepare/synthetic.h"

namespace {

using data::SyntheticTask;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> result;
  for (std::string word; in >> word;) result.push_back(word);
  return result;
}

TEST(DataSynthetic, DeterministicForASeed) {
  const data::SyntheticOptions options;
  const auto a = data::make_synthetic(SyntheticTask::kCopy, options, 200, 7);
  const auto b = data::make_synthetic(SyntheticTask::kCopy, options, 200, 7);
  const auto c = data::make_synthetic(SyntheticTask::kCopy, options, 200, 8);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.tgt, b.tgt);
  EXPECT_NE(a.src, c.src);
}

TEST(DataSynthetic, CopyAndReverseTargets) {
  const data::SyntheticOptions options;
  const auto copy = data::make_synthetic(SyntheticTask::kCopy, options, 100, 1);
  EXPECT_EQ(copy.src, copy.tgt);
  const auto reverse = data::make_synthetic(SyntheticTask::kReverse, options, 100, 1);
  EXPECT_EQ(reverse.src, copy.src);  // same draws, only the target differs
  for (size_t i = 0; i < reverse.src.size(); ++i) {
    auto expected = words(reverse.src[i]);
    std::reverse(expected.begin(), expected.end());
    EXPECT_EQ(words(reverse.tgt[i]), expected) << reverse.src[i];
  }
}

TEST(DataSynthetic, LengthsAndSymbolsWithinOptions) {
  data::SyntheticOptions options;
  options.symbols = 5;
  options.min_len = 2;
  options.max_len = 4;
  const auto text = data::make_synthetic(SyntheticTask::kCopy, options, 500, 3);
  const auto symbols = data::synthetic_symbols(5);
  EXPECT_EQ(symbols, (std::vector<std::string>{"s0", "s1", "s2", "s3", "s4"}));
  std::set<size_t> lengths;
  std::set<std::string> seen;
  for (const auto& line : text.src) {
    const auto sequence = words(line);
    lengths.insert(sequence.size());
    seen.insert(sequence.begin(), sequence.end());
  }
  EXPECT_EQ(lengths, (std::set<size_t>{2, 3, 4}));
  EXPECT_EQ(seen, std::set<std::string>(symbols.begin(), symbols.end()));
}

TEST(DataSynthetic, RejectsBadOptions) {
  data::SyntheticOptions options;
  options.min_len = 5;
  options.max_len = 4;
  EXPECT_THROW(data::make_synthetic(SyntheticTask::kCopy, options, 1, 1), std::invalid_argument);
  EXPECT_THROW(data::parse_synthetic_task("sort"), std::invalid_argument);
}

}  // namespace
