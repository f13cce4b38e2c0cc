// sacreBLEU's default BLEU tokenizer "13a" (sacrebleu/tokenizers/tokenizer_13a.py),
// the tokenization of mteval-v13a.pl used by WMT:
//
//   1. drop "<skipped>", join lines broken after a dash ("-\n"), other
//      newlines become spaces;
//   2. unescape &quot; &amp; &lt; &gt; (in that order, so "&amp;lt;" -> "<");
//   3. pad the line with a space on each side (it matters: " .5" splits the
//      period from the 5, ".5" would not) and apply the mteval punctuation
//      rules (mteval_rules.h).
//
//   "Hello, world! It's 3.5-4 &quot;ok&quot;." -> "Hello , world ! It's 3.5 - 4 \" ok \" ."
#pragma once
#include <string>
#include <string_view>

namespace eval::metrics {

std::u32string tokenize_13a(std::u32string_view line);

}  // namespace eval::metrics
