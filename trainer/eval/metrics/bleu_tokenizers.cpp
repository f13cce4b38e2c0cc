#include "trainer/eval/metrics/bleu_tokenizers.h"

#include <stdexcept>

#include "data_pipeline/utf8.h"
#include "trainer/eval/metrics/tokenizer_13a.h"
#include "trainer/eval/metrics/tokenizer_zh.h"

namespace eval::metrics {
namespace {

std::u32string tokenize_char(std::u32string_view line) {
  std::u32string spaced;
  for (const char32_t c : line) {
    if (!spaced.empty()) spaced += U' ';
    spaced += c;
  }
  return spaced;
}

std::u32string tokenize_none(std::u32string_view line) { return std::u32string(line); }

struct NamedTokenizer {
  const char* name;
  BleuTokenizer tokenize;
};

constexpr NamedTokenizer kTokenizers[] = {
    {"13a", tokenize_13a},
    {"char", tokenize_char},
    {"none", tokenize_none},
    {"zh", tokenize_zh},
};

}  // namespace

std::vector<std::string> bleu_tokenizer_names() {
  std::vector<std::string> names;
  for (const NamedTokenizer& tokenizer : kTokenizers) names.push_back(tokenizer.name);
  return names;
}

BleuTokenizer bleu_tokenizer(const std::string& name) {
  std::string known;
  for (const NamedTokenizer& tokenizer : kTokenizers) {
    if (name == tokenizer.name) return tokenizer.tokenize;
    known += known.empty() ? tokenizer.name : std::string(", ") + tokenizer.name;
  }
  throw std::invalid_argument("unknown BLEU tokenizer '" + name + "' (known: " + known + ")");
}

std::string tokenize_for_bleu(std::string_view line, const std::string& name) {
  return data::encode_utf8(bleu_tokenizer(name)(data::decode_utf8(line)));
}

}  // namespace eval::metrics
