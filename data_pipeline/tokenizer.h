// Text <-> token ids, behind one interface so callers never care which kind.
//
// Kinds: "word" (whitespace-separated words) and "char" (UTF-8 code points),
// both a Vocab underneath (vocab_tokenizer.h), and "spm" (SentencePiece BPE
// or unigram): trained and encoded by prepare_data with the SentencePiece
// library (prepare/sentencepiece_tokenizer.h), decoded anywhere from its
// pieces (piece_decoder.h). prepare_data, the manifest and the trainer only
// pass the kind and a file name around.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data_pipeline/manifest.h"
#include "data_pipeline/tokenizer_kind.h"

namespace data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual TokenizerKind kind() const = 0;
  virtual int64_t vocab_size() const = 0;  // ids are in [0, vocab_size)

  // Token ids of `text`, without bos/eos; unknown tokens become unk.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Text of `ids`: stops at the first eos, skips pad and bos; unk is written
  // as "<unk>" so that a reader sees it (e.g. in BLEU output).
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;

  virtual void save(const std::filesystem::path& file) const = 0;
};

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
std::unique_ptr<Tokenizer> load_tokenizer(TokenizerKind kind,
                                          const std::filesystem::path& file);

// The dataset's tokenizer of one side ("src" or "tgt"), checked against the
// manifest's vocabulary size: a vocabulary file shorter than the model's
// output layer would fail only when an id past its end is decoded, without
// naming the file. Throws naming the file and both sizes.
std::unique_ptr<Tokenizer> load_dataset_tokenizer(const Manifest& manifest,
                                                  const std::filesystem::path& dir,
                                                  const std::string& side);

// File name inside the dataset dir for one side ("src" or "tgt"), or for the
// joint tokenizer when `side` is empty: vocab.src.txt, vocab.tgt.txt, vocab.txt;
// spm.src.model, spm.tgt.model, spm.model (each with its .vocab).
std::string tokenizer_file_name(TokenizerKind kind, std::string_view side);

}  // namespace data
