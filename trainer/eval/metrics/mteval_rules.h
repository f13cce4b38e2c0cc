// The punctuation rules of mteval-v13a.pl, shared by the 13a and zh BLEU
// tokenizers: sacreBLEU's TokenizerRegexp (sacrebleu/tokenizers/tokenizer_re.py)
// applies four regular expressions in turn, then normalises spaces:
//
//   ([\{-\~\[-\` -\&\(-\+\:-\@\/])  -> ' \1 '   ASCII symbols stand alone
//                                               (all but ' , - . and alphanumerics)
//   ([^0-9])([\.,])                 -> '\1 \2 ' period/comma split unless after a digit
//   ([\.,])([^0-9])                 -> ' \1 \2' period/comma split unless before a digit
//   ([0-9])(-)                      -> '\1 \2 ' dash split after a digit
//   ' '.join(line.split())                      one space between tokens, none at the ends
//
// Each substitution scans left to right and its matches do not overlap, as
// Python's re.sub does: "a.,b" splits the period (matched with 'a') but the
// comma, whose left neighbour was consumed, only in the next rule.
// So "3.5" stays one token, "3-4" becomes "3 - 4", and "end." becomes "end .".
#pragma once
#include <string>
#include <string_view>

namespace eval::metrics {

std::u32string apply_mteval_rules(std::u32string_view line);

}  // namespace eval::metrics
