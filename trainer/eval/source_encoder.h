// Source text -> token ids for evaluate --translate.
//
// Word and character tokenizers encode in this process. SentencePiece cannot
// (its library may not share a process with LibTorch; see CMakeLists.txt):
// its datasets are encoded by a child process, the `tokenize` program beside
// this one, fed a line and answering a line.
#pragma once
#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "data_pipeline/manifest.h"
#include "data_pipeline/tokenizer.h"

namespace eval {

class SourceEncoder {
 public:
  SourceEncoder(const std::string& data_dir, const data::Manifest& manifest);
  ~SourceEncoder();  // closes the child's input and waits for it

  std::vector<int32_t> encode(const std::string& line);  // without bos/eos

  SourceEncoder(const SourceEncoder&) = delete;
  SourceEncoder& operator=(const SourceEncoder&) = delete;

 private:
  std::unique_ptr<data::Tokenizer> tokenizer_;  // in process (word, char)
  pid_t child_ = -1;                            // or the tokenize process (spm)
  FILE* to_child_ = nullptr;
  FILE* from_child_ = nullptr;
};

}  // namespace eval
