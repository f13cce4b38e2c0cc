// chrF and chrF++ (trainer/eval/metrics/chrf.h) against sacreBLEU's own test
// cases (repository mjpost/sacrebleu, test/test_chrf.py), with its tolerance.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainer/eval/metrics/chrf.h"

namespace {

using eval::metrics::ChrfOptions;
using Lines = std::vector<std::string>;
using Streams = std::vector<Lines>;

// ---- chrF: sacrebleu test/test_chrf.py (EPSILON 1e-4) --------------------------------

ChrfOptions chrf_beta3(bool eps_smoothing) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  return options;
}

struct ChrfCase {
  Lines hyps;
  Lines refs;  // one stream
  double expected;
};

// Each case's score within sacreBLEU's chrF test tolerance, 1e-4.
void expect_chrf_scores(const std::vector<ChrfCase>& cases, const ChrfOptions& options) {
  for (const ChrfCase& c : cases) {
    EXPECT_NEAR(eval::metrics::corpus_chrf(c.hyps, {c.refs}, options).score, c.expected, 1e-4)
        << c.hyps[0];
  }
}

// test_chrf: beta 3 with epsilon smoothing (chrF++.py / NLTK / Moses style).
TEST(EvalMetricsChrf, EpsilonSmoothing) {
  const std::vector<ChrfCase> cases = {
      {{"abcdefg"}, {"hijklmnop"}, 0.0},
      {{"a"}, {"b"}, 0.0},
      {{""}, {"b"}, 0.0},
      {{""}, {"ref"}, 0.0},
      {{""}, {"reference"}, 0.0},
      {{"aa"}, {"ab"}, 8.3333},
      {{"a", "b"}, {"a", "c"}, 8.3333},
      {{"a"}, {"a"}, 16.6667},
      {{"a b c"}, {"a b c"}, 50.0},
      {{"a b c"}, {"abc"}, 50.0},
      {{" risk assessment must be made of those who are qualified and expertise in the sector - "
        "these are the scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area "
        "- that is the scientists ."},
       63.361730},
      {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       64.1302698},
      {{"Niemand hat die Absicht, eine Mauer zu errichten"},
       {"Niemand hat die Absicht, eine Mauer zu errichten"},
       100.0},
  };
  expect_chrf_scores(cases, chrf_beta3(true));
}

// test_chrf_eff_order: beta 3, sacreBLEU's default effective-order averaging.
TEST(EvalMetricsChrf, EffectiveOrder) {
  const std::vector<ChrfCase> cases = {
      {{"a"}, {"a"}, 100.0},       {{""}, {"reference"}, 0.0}, {{"a b c"}, {"a b c"}, 100.0},
      {{"a b c"}, {"abc"}, 100.0}, {{""}, {"c"}, 0.0},         {{"a", "b"}, {"a", "c"}, 50.0},
      {{"aa"}, {"ab"}, 25.0},
  };
  expect_chrf_scores(cases, chrf_beta3(false));
}

// test_chrf_keep_whitespace: beta 3, spaces inside character n-grams.
TEST(EvalMetricsChrf, KeepWhitespace) {
  const std::vector<ChrfCase> cases = {
      {{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       67.3481606},
      {{"risk assessment must be made of those who are qualified and expertise in the sector - "
        "these are the scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area "
        "- that is the scientists ."},
       65.2414427},
  };
  ChrfOptions options = chrf_beta3(false);
  options.whitespace = true;
  expect_chrf_scores(cases, options);
}

// test_chrf_sentence_level: sentence_chrf(eps_smoothing=True), default beta 2;
// Czech, so character n-grams must count code points, not bytes.
TEST(EvalMetricsChrf, SentenceLevelCzech) {
  const std::vector<ChrfCase> cases = {
      {{"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře."},
       {"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."},
       39.14078509},
      {{"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři."},
       {"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."},
       31.22557079},
      {{"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly."},
       {"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."},
       57.15704367},
  };
  ChrfOptions options;
  options.eps_smoothing = true;
  expect_chrf_scores(cases, options);
}

// By hand, following CHRF._compute_segment_statistics (a later reference
// replaces the best only with a higher F): character unigrams, beta 1.
//   segment 1, hyp "ab": ref "a"    -> hyp 2, ref 1, match 1: P 1/2, R 1   -> F 2/3
//                        ref "abab" -> hyp 2, ref 4, match 2: P 1,   R 1/2 -> F 2/3
//   a tie: the first reference's statistics are kept.
//   segment 2, hyp "c", ref "d"     -> hyp 1, ref 1, match 0
//   corpus: hyp 3, ref 2, match 1: P 1/3, R 1/2 -> F = 2 PR / (P + R) = 0.4
//   (with the second reference it would be P 2/3, R 2/5 -> F 0.5).
TEST(EvalMetricsChrf, BestReferenceKeepsTheFirstOfEqualScores) {
  ChrfOptions options;
  options.char_order = 1;
  options.beta = 1;
  EXPECT_NEAR(eval::metrics::corpus_chrf({"ab", "c"}, {{"a", "d"}, {"abab", "d"}}, options).score,
              40.0, 1e-9);
}

// By hand, following CHRF._get_match_statistics: hypothesis n-grams of an
// order the reference lacks are not counted. Character orders 1-2, beta 1.
//   segment 1, "abc" vs "a":   order 1: hyp 3, ref 1, match 1;  order 2: ref 0, so hyp 0
//   segment 2, "xy" vs "xy":   order 1: hyp 2, ref 2, match 2;  order 2: hyp 1, ref 1, match 1
//   corpus: order 1 P 3/5, R 1; order 2 P 1, R 1 -> avg P 4/5, avg R 1
//   chrF1 = 100 * 2 (4/5) / (9/5) = 800/9   (counting segment 1's two bigrams: 700/11)
TEST(EvalMetricsChrf, OrdersMissingFromTheReferenceAreNotCounted) {
  ChrfOptions options;
  options.char_order = 2;
  options.beta = 1;
  EXPECT_NEAR(eval::metrics::corpus_chrf({"abc", "xy"}, {{"a", "xy"}}, options).score, 800.0 / 9,
              1e-9);
}

// chrF++ and case: the sacreBLEU-computed examples of the chrF metric card,
// huggingface/datasets metrics/chrf/README.md (sacreBLEU's defaults otherwise).
// The metric card's references are per hypothesis: one stream here.
TEST(EvalMetricsChrf, ChrfPlusPlusAndLowercase) {
  const Lines hyps = {"The relationship between cats and dogs is not exactly friendly.",
                      "a good bookshop is just a genteel black hole that knows how to read."};
  const Streams refs = {{"The relationship between dogs and cats is not exactly friendly.",
                         "A good bookshop is just a genteel Black Hole that knows how to read."}};
  EXPECT_NEAR(eval::metrics::corpus_chrf(hyps, refs).score, 84.64214891738334, 1e-4);
  ChrfOptions options;
  options.word_order = 2;
  EXPECT_NEAR(eval::metrics::corpus_chrf(hyps, refs, options).score, 82.87263732906315, 1e-4);
  options.lowercase = true;
  EXPECT_NEAR(eval::metrics::corpus_chrf(hyps, refs, options).score, 92.12853119829202, 1e-4);

  EXPECT_NEAR(eval::metrics::corpus_chrf(
                  {"The relationship between Obama and Netanyahu is not exactly friendly."},
                  {{"The ties between Obama and Netanyahu are not particularly friendly."}})
                  .score,
              61.576379378113785, 1e-4);
}

}  // namespace
