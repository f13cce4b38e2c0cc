// sacreBLEU's Chinese BLEU tokenizer "zh" (sacrebleu/tokenizers/tokenizer_zh.py):
// strip the line, put spaces around every Chinese character, then apply the
// mteval punctuation rules of 13a (mteval_rules.h) to the rest. Unlike 13a
// it neither unescapes entities nor drops "<skipped>".
//
//   "教我中文吧" -> "教 我 中 文 吧"
#pragma once
#include <string>
#include <string_view>

namespace eval::metrics {

// Whether sacreBLEU counts `c` as a Chinese character: the code point ranges
// of its _UCODE_RANGES table, as Python compares them (see the .cpp).
bool is_chinese_char(char32_t c);

std::u32string tokenize_zh(std::u32string_view line);

}  // namespace eval::metrics
