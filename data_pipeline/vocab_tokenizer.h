// Word and character tokenizers: split text into units, look each up in a Vocab.
//
//   word: "ein Haus ."  -> ["ein", "Haus", "."]        decode joins with ' '
//   char: "春风 得意"    -> ["春", "风", " ", "得", "意"] decode joins with ''
//
// The char tokenizer keeps spaces: they are characters of the text (an
// English side, say, needs them back when decoding). Text written with
// spaces between its characters, as the public couplet corpora are, is read
// with prepare_data --strip-spaces instead, which removes them before
// tokenizing (prepare/text_lines.h).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data_pipeline/tokenizer.h"
#include "data_pipeline/vocab.h"

namespace data {

class VocabTokenizer : public Tokenizer {
 public:
  enum class Unit { kWord, kChar };

  VocabTokenizer(Unit unit, Vocab vocab) : unit_(unit), vocab_(std::move(vocab)) {}

  // The units of `text`: words split at ASCII whitespace, or UTF-8 code
  // points (std::invalid_argument on invalid UTF-8). Views into `text`.
  static std::vector<std::string_view> split(Unit unit, std::string_view text);

  TokenizerKind kind() const override {
    return unit_ == Unit::kWord ? TokenizerKind::kWord : TokenizerKind::kChar;
  }
  int64_t vocab_size() const override { return vocab_.size(); }
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  void save(const std::filesystem::path& file) const override { vocab_.save(file); }

 private:
  Unit unit_;
  Vocab vocab_;
};

}  // namespace data
