#include "trainer/eval/metrics/tokenizer_13a.h"

#include "trainer/eval/metrics/mteval_rules.h"
#include "trainer/eval/metrics/python_str.h"

namespace eval::metrics {

std::u32string tokenize_13a(std::u32string_view line) {
  // The same replacements, in the same order, as sacreBLEU (which skips the
  // unescaping when the line has no '&': a shortcut with the same result).
  static const std::u32string_view kReplacements[][2] = {
      {U"<skipped>", U""}, {U"-\n", U""},   {U"\n", U" "},   {U"&quot;", U"\""},
      {U"&amp;", U"&"},    {U"&lt;", U"<"}, {U"&gt;", U">"},
  };
  std::u32string text(line);
  for (const auto& [from, to] : kReplacements) text = replace_all(text, from, to);
  return apply_mteval_rules(U" " + text + U" ");
}

}  // namespace eval::metrics
