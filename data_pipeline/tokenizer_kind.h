// The kinds of tokenizer (tokenizer.h), as manifest.json, prepare_data's
// settings and the log name them.
#pragma once
#include "settings/names.h"

namespace data {

enum class TokenizerKind { kWord, kChar, kSentencePiece };
inline const settings::Names<TokenizerKind> kTokenizerKindNames = {
    {"word", TokenizerKind::kWord},
    {"char", TokenizerKind::kChar},
    {"spm", TokenizerKind::kSentencePiece}};

}  // namespace data
