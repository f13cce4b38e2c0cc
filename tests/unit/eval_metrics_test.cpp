// The text and label metrics of trainer/eval/metrics/ against published values.
//
// BLEU and chrF expectations are sacreBLEU's own test cases (repository
// mjpost/sacrebleu, test/*.py), with the tolerances those tests use; the
// file and test function are named above each group. sacreBLEU's suite has
// no test of the 13a/zh/char tokenizers: those expectations are what
// sacreBLEU's tokenizer classes return for the same lines, plus the cases
// published by sbintuitions/flexeval. Label metrics are checked against
// values worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "trainer/eval/metrics/bleu.h"
#include "trainer/eval/metrics/bleu_tokenizers.h"
#include "trainer/eval/metrics/chrf.h"
#include "trainer/eval/metrics/classification_metrics.h"

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

// ---- tokenizers: sacreBLEU's Tokenizer13a / TokenizerZh / TokenizerChar
// (sacrebleu/tokenizers/) on the same lines -----------------------------------------

TEST(EvalMetricsTokenizer, Tokenizer13a) {
  const std::pair<std::string, std::string> cases[] = {
      // sbintuitions/flexeval tests/core/metric/tokenizer/test_sacrebleu_tokenizer.py
      {"I'm a student.", "I'm a student ."},
      // entities unescaped, symbols apart, "3.5" kept, dash after a digit split
      {"Hello, world! It's 3.5-4 &quot;ok&quot;.", "Hello , world ! It's 3.5 - 4 \" ok \" ."},
      {"The U.S. economy grew 3.5% in 2019, adding 1,000 jobs.",
       "The U . S . economy grew 3.5 % in 2019 , adding 1,000 jobs ."},
      {"a.,b", "a . , b"},           // non-overlapping matches, rule after rule
      {".5 and 5.", ". 5 and 5 ."},  // the padding spaces count as non-digits
      {"<skipped> line-\nbreak\nnext", "linebreak next"},
      {"&amp;lt; &lt;tag&gt; AT&amp;T", "< < tag > AT & T"},  // &amp; first, then &lt;
      {"e-mail x-1 1-x 2-3", "e-mail x-1 1 - x 2 - 3"},
      {"(hi) [a]{b} ~`^_ @home #tag $5 100%", "( hi ) [ a ] { b } ~ ` ^ _ @ home # tag $ 5 100 %"},
      {"Grüße, «Welt»… naïve café.", "Grüße , «Welt»… naïve café ."},  // non-ASCII untouched
      {"a\u00a0b\u3000c\u2028d", "a b c d"},  // Unicode whitespace separates, as str.split()
  };
  for (const auto& [line, expected] : cases) {
    EXPECT_EQ(eval::metrics::tokenize_for_bleu(line, "13a"), expected) << line;
  }
}

TEST(EvalMetricsTokenizer, ChineseCharAndNone) {
  // sbintuitions/flexeval tests/core/metric/tokenizer/test_sacrebleu_tokenizer.py
  EXPECT_EQ(eval::metrics::tokenize_for_bleu("教我中文吧", "zh"), "教 我 中 文 吧");
  EXPECT_EQ(eval::metrics::tokenize_for_bleu("我爱北京天安门。Hello, world!", "zh"),
            "我 爱 北 京 天 安 门 。 Hello , world !");
  // sacreBLEU's range table also catches '“' and '—' but not Extension B (U+20000).
  EXPECT_EQ(eval::metrics::tokenize_for_bleu("“引号”—破折号 and \U00020000 3.5", "zh"),
            "“ 引 号 ” — 破 折 号 and \U00020000 3.5");
  EXPECT_EQ(eval::metrics::tokenize_for_bleu("ab c", "char"), "a b   c");
  EXPECT_EQ(eval::metrics::tokenize_for_bleu("ţară!", "char"), "ţ a r ă !");  // code points
  EXPECT_EQ(eval::metrics::tokenize_for_bleu(" As  is. ", "none"), " As  is. ");
}

TEST(EvalMetricsTokenizer, UnknownTokenizerAndInvalidUtf8AreErrors) {
  try {
    eval::metrics::tokenize_for_bleu("x", "intl");
    FAIL() << "intl is not provided";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown BLEU tokenizer 'intl' (known: 13a, char, none, zh)");
  }
  EXPECT_THROW(eval::metrics::tokenize_for_bleu("ab\xC0\xAF", "13a"), std::invalid_argument);
  EXPECT_THROW(eval::metrics::corpus_bleu({"a"}, {{"a"}}, bleu_options("13a", "add-one")),
               std::invalid_argument);
  EXPECT_THROW(eval::metrics::corpus_bleu({"a", "b"}, {{"a"}}), std::invalid_argument);
  EXPECT_THROW(eval::metrics::corpus_chrf({"a"}, {}), std::invalid_argument);
}

// Lowercasing as Python's str.lower(): Unicode letters, U+0130 and final sigma.
// Hypothesis and reference differ only in case, so lowercased scores are 100.
TEST(EvalMetricsTokenizer, LowercaseIsUnicode) {
  BleuOptions bleu;
  bleu.lowercase = true;
  EXPECT_NEAR(
      eval::metrics::corpus_bleu({"ÜBER DIE STRAẞE ΟΔΟΣ"}, {{"über die straße οδος"}}, bleu).score,
      100.0, 1e-9);
  EXPECT_EQ(eval::metrics::corpus_bleu({"ÜBER DIE STRAẞE ΟΔΟΣ"}, {{"über die straße οδος"}}).score,
            0.0);
  ChrfOptions chrf;
  chrf.lowercase = true;
  // "İ" -> "i̇" (two code points); "ΣΑ": not final; "ΑΣ." and "ΑΣ": final.
  EXPECT_NEAR(eval::metrics::corpus_chrf({"İ ΣΑ ΑΣ. ΑΣ"}, {{"i\u0307 σα ας. ας"}}, chrf).score,
              100.0, 1e-9);
  EXPECT_LT(eval::metrics::corpus_chrf({"ΑΣ"}, {{"ασ"}}, chrf).score, 100.0);
}

// ---- accuracy and macro F1: by hand ----------------------------------------------

TEST(EvalMetricsClassification, AccuracyAndMacroF1ByHand) {
  // refs  0 0 1 1 2 2, preds 0 1 1 1 2 0: 4 of 6 right.
  //   class 0: TP 1, FP 1 (pred 0 at ref 2), FN 1 (ref 0 pred 1) -> F1 = 2/(2+1+1) = 0.5
  //   class 1: TP 2, FP 1, FN 0 -> 4/5 = 0.8
  //   class 2: TP 1, FP 0, FN 1 -> 2/3
  //   macro F1 = (0.5 + 0.8 + 2/3) / 3 = 0.655555...
  const std::vector<int64_t> refs = {0, 0, 1, 1, 2, 2}, preds = {0, 1, 1, 1, 2, 0};
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy(refs, preds), 4.0 / 6.0);
  EXPECT_NEAR(eval::metrics::macro_f1(refs, preds), (0.5 + 0.8 + 2.0 / 3.0) / 3.0, 1e-12);

  // A class only predicted (7) joins the average with F1 0, like sklearn's:
  //   class 0: TP 1, FP 0, FN 1 -> 2/3;  class 7: TP 0, FP 1, FN 0 -> 0
  //   macro F1 = (2/3 + 0) / 2 = 1/3;  accuracy 1/2
  EXPECT_NEAR(eval::metrics::macro_f1({0, 0}, {0, 7}), 1.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy({0, 0}, {0, 7}), 0.5);

  // All right: 1 and 1.
  EXPECT_DOUBLE_EQ(eval::metrics::macro_f1({3, 5, 3}, {3, 5, 3}), 1.0);
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy({3, 5, 3}, {3, 5, 3}), 1.0);

  EXPECT_THROW(eval::metrics::accuracy({}, {}), std::invalid_argument);
  EXPECT_THROW(eval::metrics::macro_f1({1, 2}, {1}), std::invalid_argument);
}

}  // namespace
