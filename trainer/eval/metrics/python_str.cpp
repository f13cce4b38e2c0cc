#include "trainer/eval/metrics/python_str.h"

#include <locale.h>
#include <wctype.h>

#include <stdexcept>

namespace eval::metrics {

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::vector<std::u32string_view> split_whitespace(std::u32string_view text) {
  std::vector<std::u32string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && is_python_space(text[pos])) ++pos;
    const size_t begin = pos;
    while (pos < text.size() && !is_python_space(text[pos])) ++pos;
    if (pos > begin) words.push_back(text.substr(begin, pos - begin));
  }
  return words;
}

std::u32string join(const std::vector<std::u32string_view>& words, std::u32string_view separator) {
  std::u32string joined;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) joined += separator;
    joined += words[i];
  }
  return joined;
}

std::u32string_view rstrip(std::u32string_view text) {
  while (!text.empty() && is_python_space(text.back())) text.remove_suffix(1);
  return text;
}

std::u32string_view strip(std::u32string_view text) {
  text = rstrip(text);
  while (!text.empty() && is_python_space(text.front())) text.remove_prefix(1);
  return text;
}

std::u32string replace_all(std::u32string_view text, std::u32string_view from,
                           std::u32string_view to) {
  std::u32string replaced;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::u32string_view::npos;) {
    replaced.append(text.substr(pos, hit - pos)).append(to);
    pos = hit + from.size();
  }
  return replaced.append(text.substr(pos));
}

namespace {

locale_t unicode_ctype() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  if (locale == locale_t{}) {
    throw std::runtime_error("lowercasing needs the C.UTF-8 locale, which is not installed");
  }
  return locale;
}

// Python's "cased" letters: those with an upper- or lowercase form.
bool is_cased(char32_t c, locale_t locale) {
  return iswupper_l(static_cast<wint_t>(c), locale) || iswlower_l(static_cast<wint_t>(c), locale);
}

constexpr char32_t kCapitalSigma = 0x03A3, kSmallSigma = 0x03C3, kFinalSigma = 0x03C2;
constexpr char32_t kCapitalIWithDot = 0x0130, kCombiningDotAbove = 0x0307;

}  // namespace

std::u32string lowercase(std::u32string_view text) {
  const locale_t locale = unicode_ctype();
  std::u32string lower;
  lower.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == kCapitalIWithDot) {
      lower += U'i';
      lower += kCombiningDotAbove;
    } else if (c == kCapitalSigma) {
      const bool ends_word = i > 0 && is_cased(text[i - 1], locale) &&
                             (i + 1 == text.size() || !is_cased(text[i + 1], locale));
      lower += ends_word ? kFinalSigma : kSmallSigma;
    } else {
      lower += static_cast<char32_t>(towlower_l(static_cast<wint_t>(c), locale));
    }
  }
  return lower;
}

}  // namespace eval::metrics
