#include "trainer/eval/metrics/tokenizer_zh.h"

#include "trainer/eval/metrics/mteval_rules.h"
#include "trainer/eval/metrics/python_str.h"

namespace eval::metrics {
namespace {

struct Range {
  char32_t first, last;  // inclusive
};

// sacreBLEU's _UCODE_RANGES, in its order. Two of its entries are written
// '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d', meant as CJK Extension B and
// the Compatibility Supplement; but Python's \u takes four hex digits, so they
// are two-character strings ('\u2000' '0'), and comparing a character with
// them covers U+2001..U+2A6D and U+2F81..U+2FA1 instead (general punctuation
// such as '—' and '“' included, Extension B not). We keep what sacreBLEU does.
constexpr Range kChineseRanges[] = {
    {0x3400, 0x4DB5},  // CJK Unified Ideographs Extension A, release 3.0
    {0x4E00, 0x9FA5},  // CJK Unified Ideographs, release 1.1
    {0x9FA6, 0x9FBB},  // CJK Unified Ideographs, release 4.1
    {0xF900, 0xFA2D},  // CJK Compatibility Ideographs, release 1.1
    {0xFA30, 0xFA6A},  // CJK Compatibility Ideographs, release 3.2
    {0xFA70, 0xFAD9},  // CJK Compatibility Ideographs, release 4.1
    {0x2001, 0x2A6D},  // '\u20000'..'\u2a6d6' as Python compares it (see above)
    {0x2F81, 0x2FA1},  // '\u2f800'..'\u2fa1d' as Python compares it (see above)
    {0xFF00, 0xFFEF},  // full-width ASCII and punctuation, half-width kana, Hangul
    {0x2E80, 0x2EFF},  // CJK Radicals Supplement
    {0x3000, 0x303F},  // CJK punctuation
    {0x31C0, 0x31EF},  // CJK strokes
    {0x2F00, 0x2FDF},  // Kangxi Radicals
    {0x2FF0, 0x2FFF},  // Chinese character structure
    {0x3100, 0x312F},  // phonetic symbols (Bopomofo)
    {0x31A0, 0x31BF},  // phonetic symbols (Taiwanese and Hakka expansion)
    {0xFE10, 0xFE1F},  // vertical forms
    {0xFE30, 0xFE4F},  // CJK compatibility forms
    {0x2600, 0x26FF},  // miscellaneous symbols
    {0x2700, 0x27BF},  // dingbats
    {0x3200, 0x32FF},  // enclosed CJK letters and months
    {0x3300, 0x33FF},  // CJK compatibility
};

}  // namespace

bool is_chinese_char(char32_t c) {
  for (const Range& range : kChineseRanges) {
    if (c >= range.first && c <= range.last) return true;
  }
  return false;
}

std::u32string tokenize_zh(std::u32string_view line) {
  std::u32string text;
  for (const char32_t c : strip(line)) {
    if (is_chinese_char(c)) {
      text.append(1, U' ').append(1, c).append(1, U' ');
    } else {
      text += c;
    }
  }
  return apply_mteval_rules(text);
}

}  // namespace eval::metrics
