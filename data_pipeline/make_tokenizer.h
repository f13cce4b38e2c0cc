// A tokenizer of a given kind (tokenizer.h): a word or char one trained from
// text, or one loaded from what Tokenizer::save wrote, a dataset's checked
// against its manifest. (prepare_data trains SentencePiece models itself:
// prepare/sentencepiece_tokenizer.h.)
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data_pipeline/manifest.h"
#include "data_pipeline/tokenizer.h"

namespace data {

// Vocabulary limits when training a tokenizer from text.
struct TokenizerOptions {
  int64_t min_count = 1;  // drop tokens seen fewer times (they become unk)
  int64_t max_size = 0;   // at most this many ids including specials; 0 = no limit
};

// Builds a word or char tokenizer from training text (one sentence per entry).
std::unique_ptr<Tokenizer> train_tokenizer(TokenizerKind kind,
                                           const std::vector<std::string_view>& text,
                                           const TokenizerOptions& options);

// Loads what Tokenizer::save wrote (spm: a decoder from the .vocab beside the .model).
std::unique_ptr<Tokenizer> load_tokenizer(TokenizerKind kind, const std::filesystem::path& file);

// The dataset's tokenizer of one side ("src" or "tgt"), checked against the
// manifest's vocabulary size: a vocabulary file shorter than the model's
// output layer would fail only when an id past its end is decoded, without
// naming the file. Throws naming the file and both sizes.
std::unique_ptr<Tokenizer> load_dataset_tokenizer(const Manifest& manifest,
                                                  const std::filesystem::path& dir,
                                                  const std::string& side);

}  // namespace data
