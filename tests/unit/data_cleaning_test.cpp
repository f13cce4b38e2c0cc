// Training-corpus cleaning (Moses clean-corpus-n semantics), hand-made cases:
// one pair per reason, whitespace normalisation; and through the text and
// label<TAB>text sources, ids = input lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/labeled_text.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "tests/unit/temp_dir_test.h"

namespace {

// Cleans the pairs in place (dropping what is not kept); returns the kept positions.
std::vector<int64_t> clean(data::ParallelText& text, const data::CleaningOptions& options,
                           data::CleaningReport& report) {
  std::vector<int64_t> kept;
  data::ParallelText out;
  for (size_t i = 0; i < text.src.size(); ++i) {
    if (!data::clean_pair(text.src[i], text.tgt[i], options, report)) continue;
    kept.push_back(static_cast<int64_t>(i));
    out.src.push_back(text.src[i]);
    out.tgt.push_back(text.tgt[i]);
  }
  text = out;
  return kept;
}

TEST(Cleaning, DropsEachReasonCountsItAndKeepsInputLines) {
  data::ParallelText text;
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"ein  Haus \t ist klein ", "a house is small"},  // 0 kept, whitespace normalised
      {"", "nothing on the left"},                      // 1 empty
      {"   ", "only spaces on the left"},               // 2 empty after normalisation
      {"eins", "one two three four five six seven eight nine ten"},  // 3 ratio 10 > 9
      {"eins", "one two three four five six seven eight nine"},      // 4 ratio 9: kept
      {"w w w w w w", "x"},                                          // 5 ratio 6: kept
      {"a b c d e f g h i j k l", "a"},  // 6 too long (12 > 10) before ratio
      {"kurz", "short"},                 // 7 too short with min 2? no: min 1
  };
  for (const auto& [s, t] : pairs) {
    text.src.push_back(s);
    text.tgt.push_back(t);
  }
  data::CleaningOptions options;
  options.max_words = 10;
  data::CleaningReport report;
  const auto lines = clean(text, options, report);
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
  data::CleaningReport report;
  const auto lines = clean(text, options, report);
  EXPECT_EQ(report.too_short, 2);  // "a" and "x"
  EXPECT_EQ(lines, std::vector<int64_t>{1});
}

// A line of one very long "word" passes the word rules; the byte cap drops
// it (on either side, a single sentence too), counted apart.
TEST(Cleaning, ByteCapDropsALongLineOfOneWord) {
  const std::string blob(5000, 'x');  // one word of 5000 bytes
  data::ParallelText text{{"ein Haus", blob, "klein"}, {"a house", "x", blob + " y"}};
  data::CleaningOptions options;
  options.max_bytes = 4096;
  data::CleaningReport report;
  EXPECT_EQ(clean(text, options, report), std::vector<int64_t>{0});
  EXPECT_EQ(report.too_many_bytes, 2);
  EXPECT_EQ(report.too_long + report.ratio, 0);
  EXPECT_EQ(report.to_json()["dropped"]["too_many_bytes"], 2);

  std::string line = blob;
  EXPECT_FALSE(data::clean_text(line, options, report));
  EXPECT_EQ(report.too_many_bytes, 3);
  std::string exactly(4096, 'y');  // the cap itself is allowed
  EXPECT_TRUE(data::clean_text(exactly, options, report));
  options.max_bytes = 0;  // no limit: one word, the word rules let it pass
  line = blob;
  EXPECT_TRUE(data::clean_text(line, options, report));
  data::ParallelText again{{blob}, {"x"}};
  options.max_ratio = 0;
  EXPECT_EQ(clean(again, options, report), std::vector<int64_t>{0});
}

// The token cap judges an encoded example: a kept one over the cap moves
// from kept to too_many_tokens.
TEST(Cleaning, TokenCapMovesAnExampleFromKept) {
  data::CleaningOptions options;
  options.max_tokens = 10;
  data::CleaningReport report;
  report.kept = 3;
  EXPECT_TRUE(data::within_token_cap(10, 10, options, report));
  EXPECT_FALSE(data::within_token_cap(3, 11, options, report));
  EXPECT_FALSE(data::within_token_cap(11, 0, options, report));
  EXPECT_EQ(report.kept, 1);
  EXPECT_EQ(report.too_many_tokens, 2);
  options.max_tokens = 0;
  EXPECT_TRUE(data::within_token_cap(1 << 20, 1 << 20, options, report));
}

class CleaningText : public test_util::TempDirTest {};

// A text source streams the pairs of a line range, cleaned, with input lines as ids.
TEST_F(CleaningText, TextSourceCleansRangesAndKeepsLineIds) {
  std::ofstream(dir_ / "s") << "a b\n\nc  d\ne\r\nf g h i j k l m n o p\n";
  std::ofstream(dir_ / "t") << "x\ny\nz w\nv\nu\n";
  data::CleaningOptions options;
  const auto pairs = data::text_pairs(dir_ / "s", dir_ / "t", {&options});
  ASSERT_EQ(pairs->size(), 5);
  std::vector<int64_t> ids;
  std::vector<std::string> src;
  data::CleaningReport report;
  pairs->read(1, 5, report, [&](data::SentencePair& p) {
    ids.push_back(p.id);
    src.push_back(p.src);
  });
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3}));  // line 1 empty, line 4 ratio 15 > 9
  EXPECT_EQ(src, (std::vector<std::string>{"c d", "e"}));
  EXPECT_EQ(report.empty, 1);
  EXPECT_EQ(report.ratio, 1);
}

// A label<TAB>text source: tgt is the label, the text is cleaned like one
// side of a pair (training split), ids are input lines.
TEST_F(CleaningText, LabeledTextCleansTheTextAndKeepsLineIds) {
  std::ofstream(dir_ / "train.tsv")
      << "a\tone  two\nb\t \nc\tthree\tfour\r\na b\t  five \nd\tsix\n";
  data::CleaningOptions options;
  const auto examples = data::labeled_text(dir_ / "train.tsv", {&options});
  ASSERT_EQ(examples->size(), 5);
  std::vector<data::SentencePair> seen;
  data::CleaningReport report;
  examples->read(0, 4, report, [&](data::SentencePair& p) { seen.push_back(p); });
  ASSERT_EQ(seen.size(), 3u);  // line 1 has an empty text; line 4 is outside [0, 4)
  EXPECT_EQ(report.empty, 1);
  EXPECT_EQ(report.kept, 3);
  const std::vector<std::tuple<int64_t, std::string, std::string>> expected = {
      {0, "one two", "a"}, {2, "three four", "c"}, {3, "five", "a b"}};
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(std::tie(seen[i].id, seen[i].src, seen[i].tgt), expected[i]);
  }
}

}  // namespace
