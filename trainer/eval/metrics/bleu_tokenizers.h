// BLEU's tokenizers by their sacreBLEU names (BLEU(tokenize=...), `sacrebleu -tok`):
//
//   13a   mteval-v13a, sacreBLEU's default (tokenizer_13a.h)
//   zh    Chinese characters apart, 13a rules elsewhere (tokenizer_zh.h)
//   char  every code point apart: " ".join(line), so "ab c" -> "a b   c"
//         (the spaces vanish when BLEU splits the line into tokens)
//   none  the line as it is
//
// sacreBLEU's intl, ja-mecab, ko-mecab and spm/flores tokenizers are not
// provided; naming them is an error like any unknown name.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace eval::metrics {

using BleuTokenizer = std::u32string (*)(std::u32string_view line);

// The names bleu_tokenizer knows: 13a, char, none, zh.
std::vector<std::string> bleu_tokenizer_names();

// Throws std::invalid_argument naming `name` and the known tokenizers.
BleuTokenizer bleu_tokenizer(const std::string& name);

// `line` (UTF-8) tokenized by the tokenizer `name`, tokens separated by spaces.
// Throws std::invalid_argument for an unknown name or invalid UTF-8.
std::string tokenize_for_bleu(std::string_view line, const std::string& name);

}  // namespace eval::metrics
