// BLEU and its signatures (trainer/eval/metrics/bleu.h, signature.h) against
// sacreBLEU's own test cases (repository mjpost/sacrebleu, test/*.py), with
// the tolerances those tests use; the file and test function are named above
// each group.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "trainer/eval/metrics/bleu.h"
#include "trainer/eval/metrics/chrf.h"

namespace {

using eval::metrics::BleuOptions;
using eval::metrics::ChrfOptions;
using Lines = std::vector<std::string>;
using Streams = std::vector<Lines>;

// sacrebleu test/test_bleu.py: the README example, two reference streams.
const Lines kReadmeHyps = {"The dog bit the man.", "It wasn't surprising.",
                           "The man had just bitten him."};
const Streams kReadmeRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

BleuOptions bleu_options(const std::string& tokenize, const std::string& smooth_method) {
  BleuOptions options;
  options.tokenize = tokenize;
  options.smooth_method = smooth_method;
  return options;
}

// sacrebleu.raw_corpus_bleu(hyps, refs, smooth_value): floor smoothing, no
// tokenization, effective order.
BleuOptions raw_bleu_options(std::optional<double> smooth_value) {
  BleuOptions options = bleu_options("none", "floor");
  options.smooth_value = smooth_value;
  options.effective_order = true;
  return options;
}

// f"{score:.2f}", as sacreBLEU's tests and CLI print scores.
std::string two_decimals(double score) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", score);
  return text;
}

// ---- BLEU: sacrebleu test/test_bleu.py ----------------------------------------

// test_corpus_bleu (EPSILON 1e-8); the intl tokenizer case is not ported.
TEST(EvalMetricsBleu, CorpusBleuReadmeExample) {
  constexpr double kEpsilon = 1e-8;
  EXPECT_NEAR(eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs).score, 48.530827, kEpsilon);
  EXPECT_NEAR(
      eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs, bleu_options("none", "exp")).score,
      49.1919566, kEpsilon);
  EXPECT_NEAR(
      eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs, bleu_options("13a", "exp")).score,
      48.530827, kEpsilon);
  EXPECT_NEAR(
      eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs, bleu_options("13a", "none")).score,
      48.530827, kEpsilon);
}

// test_corpus_bleu: "ensure that empty hypotheses are not removed".
TEST(EvalMetricsBleu, EmptyHypothesesScoreZero) {
  const auto bleu = eval::metrics::corpus_bleu({"", "", ""}, kReadmeRefs);
  EXPECT_EQ(bleu.score, 0.0);
  EXPECT_EQ(bleu.sys_len, 0);
  EXPECT_EQ(bleu.bp, 0.0);
}

// test_raw_bleu and test_effective_order (score / 100, EPSILON 1e-8).
TEST(EvalMetricsBleu, RawCorpusBleuPerfectPartialAndNoMatch) {
  struct Case {
    Lines hyps;
    Streams refs;
    double expected;
  };
  const Case cases[] = {
      {{"this is a test", "another test"}, {{"ref1", "ref2"}}, 0.0},  // sacreBLEU #141
      {{"this is a test"}, {{"this is a test"}}, 1.0},
      {{"this is a fest"}, {{"this is a test"}}, 0.223606797749979},
      {{"test"}, {{"a test"}}, 0.3678794411714425},
      {{"a test"}, {{"a test"}}, 1.0},
      {{"a little test"}, {{"a test"}}, 0.03218297948685433},
  };
  for (const Case& c : cases) {
    const auto bleu = eval::metrics::corpus_bleu(c.hyps, c.refs, raw_bleu_options(0.01));
    EXPECT_NEAR(bleu.score / 100, c.expected, 1e-8) << c.hyps[0];
  }
}

// test_statistics: matched and total n-gram counts.
TEST(EvalMetricsBleu, NgramStatistics) {
  const auto bleu =
      eval::metrics::corpus_bleu({"am I am a character sequence"},
                                 {{"I am a symbol string sequence a a"}}, raw_bleu_options(0.01));
  EXPECT_EQ(bleu.counts, (std::vector<int64_t>{4, 2, 1, 0}));
  EXPECT_EQ(bleu.totals, (std::vector<int64_t>{6, 5, 4, 3}));
}

// test_offset: floor smoothing with 0 and with its default value 0.1.
TEST(EvalMetricsBleu, FloorSmoothingOffset) {
  const Lines hyps = {"am I am a character sequence"};
  const Streams refs = {{"I am a symbol string sequence a a"}};
  EXPECT_NEAR(eval::metrics::corpus_bleu(hyps, refs, raw_bleu_options(0.0)).score / 100, 0.0, 1e-8);
  EXPECT_NEAR(eval::metrics::corpus_bleu(hyps, refs, raw_bleu_options(std::nullopt)).score / 100,
              0.1555722182, 1e-8);
}

// test_scoring: BLEU.compute_bleu with its defaults (smooth_method='none').
TEST(EvalMetricsBleu, ScoreFromStatistics) {
  const eval::metrics::BleuStatistics statistics{11, 11, {9, 7, 5, 3}, {10, 8, 6, 4}};
  const auto bleu = eval::metrics::compute_bleu(statistics, bleu_options("13a", "none"));
  EXPECT_NEAR(bleu.score / 100, 0.8375922397, 1e-8);
  EXPECT_EQ(bleu.bp, 1.0);
}

// test_degenerate_statistics: floor smoothing, exactly 0 (log 0 is floored).
TEST(EvalMetricsBleu, DegenerateStatisticsScoreZero) {
  struct Case {
    eval::metrics::BleuStatistics statistics;
    double floor;
  };
  const Case cases[] = {
      {{0, 1, {0, 0, 0, 0}, {4, 4, 2, 1}}, 0.0}, {{14, 10, {0, 0, 0, 0}, {10, 11, 12, 0}}, 0.0},
      {{0, 0, {0, 0, 0, 0}, {0, 0, 0, 0}}, 0.0}, {{6, 6, {6, 5, 4, 0}, {6, 5, 4, 3}}, 0.0},
      {{0, 0, {0, 0, 0, 0}, {0, 0, 0, 0}}, 0.1}, {{1, 5, {0, 0, 0, 0}, {0, 0, 0, 0}}, 0.01},
  };
  for (const Case& c : cases) {
    BleuOptions options = bleu_options("13a", "floor");
    options.smooth_value = c.floor;
    EXPECT_EQ(eval::metrics::compute_bleu(c.statistics, options).score, 0.0);
  }
}

// test_max_ngram_order: f"{score:.2f}" for orders 1..6.
TEST(EvalMetricsBleu, MaxNgramOrder) {
  const char* expected[] = {"77.65", "60.50", "53.93", "48.53", "46.14", "43.28"};
  for (int order = 1; order <= 6; ++order) {
    BleuOptions options;
    options.max_ngram_order = order;
    const auto bleu = eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs, options);
    EXPECT_EQ(two_decimals(bleu.score), expected[order - 1]) << "order " << order;
    EXPECT_EQ(bleu.precisions.size(), static_cast<size_t>(order));
  }
}

// By hand, following BLEU._get_closest_ref_len: a 3-token hypothesis is as
// near to a 2-token as to a 4-token reference; the shorter one counts, so
// there is no brevity penalty (with the longer, BP = exp(1 - 4/3)).
TEST(EvalMetricsBleu, ClosestReferenceLengthPrefersTheShorterOnTies) {
  const auto bleu = eval::metrics::corpus_bleu({"a b c"}, {{"a b"}, {"a b c d"}});
  EXPECT_EQ(bleu.ref_len, 2);
  EXPECT_EQ(bleu.bp, 1.0);
}

// ---- sentence BLEU: sacrebleu test/test_sentence_bleu.py ---------------------------

// test_api_sentence_bleu (EPSILON 1e-3): sacreBLEU issue #98's Romanian pair,
// with 'ţ' (U+0163) against 'ț' (U+021B) and 'P' against 'p'.
TEST(EvalMetricsBleu, SentenceBleuSmoothingTokenizersAndCase) {
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string sys =
      "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  struct Case {
    std::string smooth_method;
    std::optional<double> smooth_value;
    bool lowercase;
    std::string tokenize;
    double expected;
  };
  const Case cases[] = {
      {"exp", std::nullopt, false, "13a", 8.493},
      {"none", std::nullopt, false, "13a", 0.0},
      {"floor", std::nullopt, false, "13a", 4.51688},
      {"floor", 0.1, false, "13a", 4.51688},
      {"floor", 0.5, false, "13a", 10.10},
      {"add-k", std::nullopt, false, "13a", 14.882},
      {"add-k", 1, false, "13a", 14.882},
      {"add-k", 2, false, "13a", 21.389},
      {"exp", std::nullopt, false, "none", 7.347},
      {"exp", std::nullopt, false, "char", 40.8759},
      {"exp", std::nullopt, true, "char", 42.0267},
  };
  for (const Case& c : cases) {
    BleuOptions options = eval::metrics::sentence_bleu_defaults();
    options.smooth_method = c.smooth_method;
    options.smooth_value = c.smooth_value;
    options.lowercase = c.lowercase;
    options.tokenize = c.tokenize;
    EXPECT_NEAR(eval::metrics::sentence_bleu(sys, {ref}, options).score, c.expected, 1e-3)
        << c.smooth_method << " " << c.tokenize << (c.lowercase ? " lowercase" : "");
  }
}

// test_api_sentence_bleu_zero (sacreBLEU issue #141): no match is 0 whatever the smoothing.
TEST(EvalMetricsBleu, SentenceBleuWithoutMatchIsZeroForEverySmoothing) {
  for (const std::string method : {"exp", "none", "floor", "add-k"}) {
    BleuOptions options = eval::metrics::sentence_bleu_defaults();
    options.smooth_method = method;
    EXPECT_NEAR(eval::metrics::sentence_bleu("this is a cat", {"okay thanks"}, options).score, 0.0,
                1e-3)
        << method;
  }
}

// ---- signatures: sacrebleu README.md ("Version Signatures", "Multi-reference
// evaluation"), printed there with version:2.0.0; format of the smoothing
// value from BLEUSignature in sacrebleu/metrics/bleu.py ----------------------------

TEST(EvalMetricsSignature, BleuAndChrfSignatures) {
  EXPECT_EQ(eval::metrics::corpus_bleu({"a b"}, {{"a b"}}).signature,
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  EXPECT_EQ(eval::metrics::corpus_bleu(kReadmeHyps, kReadmeRefs).signature,
            "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  BleuOptions floor = bleu_options("char", "floor");
  floor.lowercase = true;
  EXPECT_EQ(eval::metrics::bleu_signature(floor, 1),
            "nrefs:1|case:lc|eff:no|tok:char|smooth:floor[0.10]|version:2.6.0");
  EXPECT_EQ(eval::metrics::bleu_signature(eval::metrics::sentence_bleu_defaults(), 1),
            "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0");

  const auto chrf = eval::metrics::corpus_chrf({"a b"}, {{"a b"}});
  EXPECT_EQ(chrf.name, "chrF2");
  EXPECT_EQ(chrf.signature, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
  ChrfOptions plus_plus;
  plus_plus.word_order = 2;
  const auto chrf_pp = eval::metrics::corpus_chrf({"a b"}, {{"a b"}}, plus_plus);
  EXPECT_EQ(chrf_pp.name, "chrF2++");
  EXPECT_EQ(chrf_pp.signature, "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0");
}

}  // namespace
