// tokenize: text -> token ids with a prepared dataset's tokenizer, a line in,
// a line out (ids separated by spaces, no bos/eos), flushed after every line
// so that another program can drive it one sentence at a time.
//
//   echo "ein kleiner Test" | tokenize --data data/de-en --side src
//
// evaluate --translate runs it as a child process for SentencePiece datasets:
// the SentencePiece library cannot share a process with LibTorch.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "data_pipeline/manifest.h"
#include "data_pipeline/prepare/tokenizers.h"
#include "data_pipeline/text_line.h"

int main(int argc, char** argv) {
  CLI::App app{"Encode text lines from stdin to token ids with a dataset's tokenizer"};
  std::string data_dir, side = "src";
  app.add_option("--data", data_dir, "dataset directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--side", side, "src or tgt")
      ->check(CLI::IsMember({"src", "tgt"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    const data::Manifest manifest = data::read_manifest(data_dir);
    const auto file = std::filesystem::path(data_dir) /
                      (side == "src" ? manifest.src_tokenizer_file : manifest.tgt_tokenizer_file);
    const std::shared_ptr<data::Tokenizer> tokenizer =
        data::load_encoder(manifest.tokenizer_kind, file);
    for (std::string line; data::read_text_line(std::cin, line);) {
      const auto ids = tokenizer->encode(line);
      for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
      std::cout << std::endl;  // flush: the reader may be waiting for this line
    }
  } catch (const std::exception& e) {
    std::cerr << "tokenize: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
