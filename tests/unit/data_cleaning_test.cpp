// Training-corpus cleaning (Moses clean-corpus-n semantics), hand-made cases:
// one pair per reason, whitespace normalisation, ids = input lines.
#include <gtest/gtest.h>

#include "data_pipeline/prepare/cleaning.h"

namespace {

TEST(Cleaning, DropsEachReasonCountsItAndKeepsInputLines) {
  data::ParallelText text;
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"ein  Haus \t ist klein ", "a house is small"},  // 0 kept, whitespace normalised
      {"", "nothing on the left"},                    // 1 empty
      {"   ", "only spaces on the left"},             // 2 empty after normalisation
      {"eins", "one two three four five six seven eight nine ten"},  // 3 ratio 10 > 9
      {"eins", "one two three four five six seven eight nine"},      // 4 ratio 9: kept
      {"w w w w w w", "x"},                           // 5 ratio 6: kept
      {"a b c d e f g h i j k l", "a"},               // 6 too long (12 > 10) before ratio
      {"kurz", "short"},                              // 7 too short with min 2? no: min 1
  };
  for (const auto& [s, t] : pairs) {
    text.src.push_back(s);
    text.tgt.push_back(t);
  }
  data::CleaningOptions options;
  options.max_words = 10;
  std::vector<int64_t> lines;
  const auto report = data::clean_corpus(text, options, lines);
  EXPECT_EQ(report.empty, 2);
  EXPECT_EQ(report.ratio, 1);
  EXPECT_EQ(report.too_long, 1);
  EXPECT_EQ(report.too_short, 0);
  EXPECT_EQ(report.kept, 4);
  EXPECT_EQ(lines, (std::vector<int64_t>{0, 4, 5, 7}));
  EXPECT_EQ(text.src[0], "ein Haus ist klein");
  EXPECT_EQ(text.tgt[1], "one two three four five six seven eight nine");
  EXPECT_EQ(report.to_json()["dropped"]["empty"], 2);
}

TEST(Cleaning, MinimumWordsAndNoLimits) {
  data::ParallelText text{{"a", "a b", "a b c"}, {"x y", "x y", "x"}};
  data::CleaningOptions options;
  options.min_words = 2;
  options.max_words = 0;
  options.max_ratio = 0;
  std::vector<int64_t> lines;
  const auto report = data::clean_corpus(text, options, lines);
  EXPECT_EQ(report.too_short, 2);  // "a" and "x"
  EXPECT_EQ(lines, std::vector<int64_t>{1});
}

}  // namespace
