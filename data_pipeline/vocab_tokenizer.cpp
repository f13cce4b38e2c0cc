#include "data_pipeline/vocab_tokenizer.h"

#include "data_pipeline/special_ids.h"
#include "data_pipeline/utf8.h"

namespace data {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    const size_t begin = pos;
    while (pos < text.size() && !is_space(text[pos])) ++pos;
    if (pos > begin) words.push_back(text.substr(begin, pos - begin));
  }
  return words;
}

}  // namespace

std::vector<std::string_view> VocabTokenizer::split(Unit unit, std::string_view text) {
  return unit == Unit::kWord ? split_words(text) : split_code_points(text);
}

std::vector<int32_t> VocabTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const auto unit : split(unit_, text)) ids.push_back(vocab_.id(unit));
  return ids;
}

std::string VocabTokenizer::decode(const std::vector<int32_t>& ids) const {
  const SpecialIds special;
  const std::string_view separator = unit_ == Unit::kWord ? " " : "";
  std::string text;
  bool first = true;
  for (const int32_t id : ids) {
    if (id == special.eos) break;
    if (id == special.pad || id == special.bos) continue;
    if (!first) text += separator;
    text += vocab_.token(id);
    first = false;
  }
  return text;
}

}  // namespace data
