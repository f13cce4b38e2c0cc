// SentencePiece ids -> text without the SentencePiece library, which cannot
// share a process with LibTorch (see CMakeLists.txt): the trainer and the
// evaluation job decode from the model's pieces, one per id, read from its
// .vocab file ("piece<TAB>score" lines, as spm_train writes them).
//
//   "▁Hel" "lo" "▁world"  ->  "Hello world"   (▁ U+2581 stands for a space;
//                                              the first one is the dummy prefix)
//   "<0xE6>" "<0x98>" "<0xA5>"  ->  "春"        (byte-fallback pieces)
//   <s>, </s>, <pad>      ->  nothing;  <unk> -> "<unk>"
//
// Encoding needs the library and happens in prepare_data
// (prepare/sentencepiece_tokenizer.h); encode() here throws.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "data_pipeline/tokenizer.h"

namespace data {

class PieceDecoder : public Tokenizer {
 public:
  explicit PieceDecoder(const std::filesystem::path& vocab_file);  // errors name the file and line

  TokenizerKind kind() const override { return TokenizerKind::kSentencePiece; }
  int64_t vocab_size() const override { return static_cast<int64_t>(pieces_.size()); }
  std::vector<int32_t> encode(std::string_view text) const override;  // throws std::logic_error
  std::string decode(const std::vector<int32_t>& ids) const override;
  void save(const std::filesystem::path& vocab_file) const override;

  // The .vocab file that goes with a .model file.
  static std::filesystem::path vocab_file_of(const std::filesystem::path& model_file);

 private:
  std::vector<std::string> pieces_;
  std::vector<std::string> scores_;  // as written, for save()
};

}  // namespace data
