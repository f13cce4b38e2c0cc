// SentencePiece (BPE or unigram) through its C++ library: trained on the
// training text, or loaded from a given .model; prepare_data's encoder.
// Models use this project's special ids (pad 0, bos 1, eos 2, unk 3), so a
// model trained here gives the same ids under Debian's spm_encode.
//
// Saved into the dataset directory as <name>.model and <name>.vocab; the
// trainer and evaluation decode from the .vocab alone (piece_decoder.h).
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <sentencepiece_processor.h>

#include "data_pipeline/tokenizer.h"

namespace data {

// SentencePiece's two models of pieces: byte-pair merges, or a unigram language model.
enum class SpmModelType { kBpe, kUnigram };
inline const settings::Names<SpmModelType> kSpmModelTypeNames = {
    {"bpe", SpmModelType::kBpe}, {"unigram", SpmModelType::kUnigram}};

struct SentencePieceOptions {
  SpmModelType model_type = SpmModelType::kBpe;
  int64_t vocab_size = 8000;        // an upper bound: small corpora may give fewer pieces
  double character_coverage = 1.0;  // e.g. 0.9995 for scripts with very many characters
  int num_threads = 2;
};

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Trains on `text` (one sentence per entry). Errors name the option at fault.
  static std::unique_ptr<SentencePieceTokenizer> train(const std::vector<std::string_view>& text,
                                                       const SentencePieceOptions& options);
  // Loads a .model; one whose special ids differ from this project's is refused.
  static std::unique_ptr<SentencePieceTokenizer> load(const std::filesystem::path& model_file);

  TokenizerKind kind() const override { return TokenizerKind::kSentencePiece; }
  int64_t vocab_size() const override { return processor_.GetPieceSize(); }
  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  // Writes the .model and, beside it, the .vocab.
  void save(const std::filesystem::path& model_file) const override;

 private:
  SentencePieceTokenizer(std::string serialized_model, const std::string& origin);
  std::string serialized_;  // the model proto, as stored in a .model file
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace data
