#include "data_pipeline/make_tokenizer.h"

#include <stdexcept>
#include <unordered_map>

#include "data_pipeline/piece_decoder.h"
#include "data_pipeline/vocab_tokenizer.h"

namespace data {

namespace {

VocabTokenizer::Unit unit_of(TokenizerKind kind) {
  return kind == TokenizerKind::kWord ? VocabTokenizer::Unit::kWord : VocabTokenizer::Unit::kChar;
}

}  // namespace

std::unique_ptr<Tokenizer> train_tokenizer(TokenizerKind kind,
                                           const std::vector<std::string_view>& text,
                                           const TokenizerOptions& options) {
  if (kind == TokenizerKind::kSentencePiece)
    throw std::invalid_argument("spm tokenizers are trained by prepare_data's SentencePiece code");
  const auto unit = unit_of(kind);
  std::unordered_map<std::string, int64_t> counts;
  for (const auto sentence : text) {
    for (const auto token : VocabTokenizer::split(unit, sentence)) ++counts[std::string(token)];
  }
  return std::make_unique<VocabTokenizer>(
      unit, Vocab::from_counts(counts, options.min_count, options.max_size));
}

std::unique_ptr<Tokenizer> load_tokenizer(TokenizerKind kind, const std::filesystem::path& file) {
  if (kind == TokenizerKind::kSentencePiece)
    return std::make_unique<PieceDecoder>(PieceDecoder::vocab_file_of(file));
  return std::make_unique<VocabTokenizer>(unit_of(kind), Vocab::load(file));
}

std::unique_ptr<Tokenizer> load_dataset_tokenizer(const Manifest& manifest,
                                                  const std::filesystem::path& dir,
                                                  const std::string& side) {
  const bool src = side == "src";
  const std::filesystem::path file =
      dir / (src ? manifest.src_tokenizer_file : manifest.tgt_tokenizer_file);
  auto tokenizer = load_tokenizer(manifest.tokenizer_kind, file);
  const int64_t expected = src ? manifest.src_vocab_size : manifest.tgt_vocab_size;
  if (tokenizer->vocab_size() != expected)
    throw std::runtime_error(
        file.string() + " holds a vocabulary of " + std::to_string(tokenizer->vocab_size()) +
        " tokens, but the manifest's " + side + "_vocab_size is " + std::to_string(expected) +
        " (a file replaced or cut short since prepare_data?)");
  return tokenizer;
}

}  // namespace data
