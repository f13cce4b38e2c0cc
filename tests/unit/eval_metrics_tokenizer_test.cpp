// The BLEU tokenizers (trainer/eval/metrics/bleu_tokenizers.h) and Unicode
// lowercasing. sacreBLEU's suite has no test of the 13a/zh/char tokenizers:
// these expectations are what sacreBLEU's tokenizer classes return for the
// same lines, plus the cases published by sbintuitions/flexeval.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "trainer/eval/metrics/bleu.h"
#include "trainer/eval/metrics/bleu_tokenizers.h"
#include "trainer/eval/metrics/chrf.h"

namespace {

using eval::metrics::BleuOptions;
using eval::metrics::ChrfOptions;

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
  BleuOptions add_one;  // tokenizer 13a
  add_one.smooth_method = "add-one";
  EXPECT_THROW(eval::metrics::corpus_bleu({"a"}, {{"a"}}, add_one), std::invalid_argument);
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

}  // namespace
