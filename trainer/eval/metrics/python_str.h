// The Python str operations sacreBLEU's metrics are built from, on code
// points: a std::u32string holds what a Python str holds, so lengths, slices
// and n-grams count Unicode code points, never bytes.
//
//   str.isspace()      is_python_space
//   str.split()        split_whitespace   (runs of Unicode whitespace, no empty words)
//   sep.join(words)    join
//   str.strip/rstrip() strip / rstrip
//   str.replace(a, b)  replace_all        (left to right, non-overlapping)
//   str.lower()        lowercase
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace eval::metrics {

// Python's whitespace: U+0009..U+000D, U+001C..U+001F, space, U+0085, U+00A0,
// U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_space(char32_t c);

std::vector<std::u32string_view> split_whitespace(std::u32string_view text);
std::u32string join(const std::vector<std::u32string_view>& words, std::u32string_view separator);
std::u32string_view strip(std::u32string_view text);
std::u32string_view rstrip(std::u32string_view text);
std::u32string replace_all(std::u32string_view text, std::u32string_view from,
                           std::u32string_view to);

// Unicode lowercase: glibc's towlower in the C.UTF-8 locale (the same simple
// mapping Python uses) plus Python's two special cases: U+0130 'İ' becomes
// "i̇" (i + U+0307), and a capital sigma ending a word becomes 'ς'. Python
// skips case-ignorable characters (apostrophes, combining marks) when it
// looks for that word end; this looks at the adjacent characters only.
std::u32string lowercase(std::u32string_view text);

}  // namespace eval::metrics
