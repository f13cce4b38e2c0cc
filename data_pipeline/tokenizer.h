// Text <-> token ids, behind one interface so callers never care which kind.
//
// Kinds: "word" (whitespace-separated words) and "char" (UTF-8 code points),
// both a Vocab underneath (vocab_tokenizer.h), and "spm" (SentencePiece BPE
// or unigram): trained and encoded by prepare_data with the SentencePiece
// library (prepare/sentencepiece_tokenizer.h), decoded anywhere from its
// pieces (piece_decoder.h). prepare_data, the manifest and the trainer only
// pass the kind and a file name around; make_tokenizer.h makes one of a kind.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// File name inside the dataset dir for one side ("src" or "tgt"), or for the
// joint tokenizer when `side` is empty: vocab.src.txt, vocab.tgt.txt, vocab.txt;
// spm.src.model, spm.tgt.model, spm.model (each with its .vocab).
std::string tokenizer_file_name(TokenizerKind kind, std::string_view side);

}  // namespace data
