#include "trainer/eval/metrics/mteval_rules.h"

#include <vector>

#include "trainer/eval/metrics/python_str.h"

namespace eval::metrics {
namespace {

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool is_not_digit(char32_t c) { return !is_digit(c); }
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }
bool is_dash(char32_t c) { return c == U'-'; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]
bool is_lone_symbol(char32_t c) {
  return (c >= U'{' && c <= U'~') || (c >= U'[' && c <= U'`') || (c >= U' ' && c <= U'&') ||
         (c >= U'(' && c <= U'+') || (c >= U':' && c <= U'@') || c == U'/';
}

// re.sub(r'(A)(B)', before + r'\1 \2' + after, text) for one-character
// classes A and B: the first match from the left is replaced, and the scan
// goes on after it.
std::u32string substitute_pairs(std::u32string_view text, bool (*first)(char32_t),
                                bool (*second)(char32_t), std::u32string_view before,
                                std::u32string_view after) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      out.append(before).append(1, text[i]).append(1, U' ').append(1, text[i + 1]).append(after);
      i += 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace

std::u32string apply_mteval_rules(std::u32string_view line) {
  std::u32string text;
  for (const char32_t c : line) {
    if (is_lone_symbol(c)) {
      text.append(1, U' ').append(1, c).append(1, U' ');
    } else {
      text += c;
    }
  }
  text = substitute_pairs(text, is_not_digit, is_period_or_comma, U"", U" ");
  text = substitute_pairs(text, is_period_or_comma, is_not_digit, U" ", U"");
  text = substitute_pairs(text, is_digit, is_dash, U"", U" ");
  return join(split_whitespace(text), U" ");
}

}  // namespace eval::metrics
