// Synthetic tasks: deterministic per seed, correct targets (copy, reverse)
// and labels (majority, counted here), lengths and symbols within their
// options, balanced classes.
#include <algorithm>
#include <map>
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

// Examples [begin, end) of a synthetic source, as prepare_data reads them.
data::ParallelText read_pairs(const data::PairSource& pairs, int64_t begin, int64_t end) {
  data::ParallelText text;
  data::CleaningReport report;
  int64_t next_id = begin;
  pairs.read(begin, end, report, [&](data::SentencePair& pair) {
    EXPECT_EQ(pair.id, next_id++);  // ids are positions
    text.src.push_back(pair.src);
    text.tgt.push_back(pair.tgt);
  });
  EXPECT_EQ(next_id, end);
  return text;
}

data::ParallelText make_synthetic(SyntheticTask task, const data::SyntheticOptions& options,
                                  int64_t size, uint64_t seed) {
  return read_pairs(*data::synthetic_pairs(task, options, size, seed), 0, size);
}

TEST(DataSynthetic, DeterministicForASeed) {
  const data::SyntheticOptions options;
  const auto a = make_synthetic(SyntheticTask::kCopy, options, 200, 7);
  const auto b = make_synthetic(SyntheticTask::kCopy, options, 200, 7);
  const auto c = make_synthetic(SyntheticTask::kCopy, options, 200, 8);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.tgt, b.tgt);
  EXPECT_NE(a.src, c.src);
}

// A rank reads a range of the examples: the same examples as in the whole,
// for every task (majority redraws, so its draws per example vary).
TEST(DataSynthetic, ARangeIsTheSameExamplesAsInTheWhole) {
  const data::SyntheticOptions options;
  for (const auto task :
       {SyntheticTask::kCopy, SyntheticTask::kReverse, SyntheticTask::kMajority}) {
    const auto pairs = data::synthetic_pairs(task, options, 300, 11);
    EXPECT_EQ(pairs->size(), 300);
    const auto whole = read_pairs(*pairs, 0, 300);
    const auto part = read_pairs(*pairs, 120, 210);
    EXPECT_EQ(part.src, std::vector<std::string>(whole.src.begin() + 120, whole.src.begin() + 210));
    EXPECT_EQ(part.tgt, std::vector<std::string>(whole.tgt.begin() + 120, whole.tgt.begin() + 210));
  }
}

TEST(DataSynthetic, CopyAndReverseTargets) {
  const data::SyntheticOptions options;
  const auto copy = make_synthetic(SyntheticTask::kCopy, options, 100, 1);
  EXPECT_EQ(copy.src, copy.tgt);
  const auto reverse = make_synthetic(SyntheticTask::kReverse, options, 100, 1);
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
  const auto text = make_synthetic(SyntheticTask::kCopy, options, 500, 3);
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

// The majority label, counted here: the unique most frequent of s0..s{classes-1}.
std::string most_frequent_class(const std::vector<std::string>& sequence, int classes) {
  std::map<std::string, int> counts;
  for (const auto& symbol : sequence) ++counts[symbol];
  std::string best;
  int best_count = 0, ties = 0;
  for (int c = 0; c < classes; ++c) {
    const std::string symbol = "s" + std::to_string(c);
    if (counts[symbol] > best_count) {
      best = symbol;
      best_count = counts[symbol];
      ties = 0;
    } else if (counts[symbol] == best_count) {
      ++ties;
    }
  }
  return best_count > 0 && ties == 0 ? best : "(none)";
}

TEST(DataSynthetic, MajorityLabelIsTheMostFrequentClassSymbol) {
  data::SyntheticOptions options;
  options.symbols = 10;
  options.classes = 4;
  options.min_len = 3;
  options.max_len = 9;
  const int size = 4000;
  const auto text = make_synthetic(SyntheticTask::kMajority, options, size, 5);
  ASSERT_EQ(text.src.size(), size_t{size});
  std::map<std::string, int> per_label;
  std::set<std::string> seen;
  for (size_t i = 0; i < text.src.size(); ++i) {
    const auto sequence = words(text.src[i]);
    EXPECT_GE(sequence.size(), 3u);
    EXPECT_LE(sequence.size(), 9u);
    seen.insert(sequence.begin(), sequence.end());
    EXPECT_EQ(text.tgt[i], most_frequent_class(sequence, 4)) << text.src[i];
    ++per_label[text.tgt[i]];
  }
  EXPECT_EQ(seen.size(), 10u);  // fillers s4..s9 occur too
  ASSERT_EQ(per_label.size(), 4u);
  for (const auto& [label, count] : per_label) {  // 1000 expected each; 5 sigma is about 140
    EXPECT_GT(count, 850) << label;
    EXPECT_LT(count, 1150) << label;
  }
  EXPECT_EQ(make_synthetic(SyntheticTask::kMajority, options, size, 5).src, text.src);
  EXPECT_NE(make_synthetic(SyntheticTask::kMajority, options, size, 6).src, text.src);
}

TEST(DataSynthetic, RejectsBadOptions) {
  data::SyntheticOptions options;
  options.min_len = 5;
  options.max_len = 4;
  EXPECT_THROW(make_synthetic(SyntheticTask::kCopy, options, 1, 1), std::invalid_argument);
  data::SyntheticOptions classes;
  classes.classes = 1;
  EXPECT_THROW(make_synthetic(SyntheticTask::kMajority, classes, 1, 1), std::invalid_argument);
  classes.classes = classes.symbols + 1;
  EXPECT_THROW(make_synthetic(SyntheticTask::kMajority, classes, 1, 1), std::invalid_argument);
}

}  // namespace
