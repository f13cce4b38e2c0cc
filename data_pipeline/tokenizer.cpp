#include "data_pipeline/tokenizer.h"

namespace data {

std::string tokenizer_file_name(TokenizerKind kind, std::string_view side) {
  const std::string infix = side.empty() ? "" : "." + std::string(side);
  return (kind == TokenizerKind::kSentencePiece ? "spm" + infix + ".model"
                                                : "vocab" + infix + ".txt");
}

}  // namespace data
