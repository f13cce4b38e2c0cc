#include "data_pipeline/tokenizer.h"

#include <stdexcept>
#include <unordered_map>

#include "data_pipeline/vocab_tokenizer.h"

namespace data {

namespace {

VocabTokenizer::Unit unit_of(const std::string& kind) {
  if (kind == "word") return VocabTokenizer::Unit::kWord;
  if (kind == "char") return VocabTokenizer::Unit::kChar;
  throw std::invalid_argument("unknown tokenizer kind '" + kind + "' (expected word or char)");
}

}  // namespace

const std::vector<std::string>& tokenizer_kinds() {
  static const std::vector<std::string> kinds = {"word", "char"};
  return kinds;
}

std::unique_ptr<Tokenizer> train_tokenizer(const std::string& kind,
                                           const std::vector<std::string_view>& text,
                                           const TokenizerOptions& options) {
  const auto unit = unit_of(kind);
  std::unordered_map<std::string, int64_t> counts;
  for (const auto sentence : text) {
    for (const auto token : VocabTokenizer::split(unit, sentence)) ++counts[std::string(token)];
  }
  return std::make_unique<VocabTokenizer>(
      unit, Vocab::from_counts(counts, options.min_count, options.max_size));
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind,
                                          const std::filesystem::path& file) {
  return std::make_unique<VocabTokenizer>(unit_of(kind), Vocab::load(file));
}

std::string tokenizer_file_name(const std::string& kind, std::string_view side) {
  unit_of(kind);  // rejects unknown kinds
  return side.empty() ? "vocab.txt" : "vocab." + std::string(side) + ".txt";
}

}  // namespace data
