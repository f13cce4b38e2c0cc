#include "data_pipeline/prepare/sentencepiece_tokenizer.h"

#include <sentencepiece_trainer.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "data_pipeline/special_ids.h"

namespace data {

namespace {

// The training sentences, handed to the trainer without a temporary file.
class TextIterator : public sentencepiece::SentenceIterator {
 public:
  explicit TextIterator(const std::vector<std::string_view>& text) : text_(text) { load(); }
  bool done() const override { return index_ >= text_.size(); }
  void Next() override {
    ++index_;
    load();
  }
  const std::string& value() const override { return current_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void load() {
    if (!done()) current_.assign(text_[index_]);
  }
  const std::vector<std::string_view>& text_;
  size_t index_ = 0;
  std::string current_;
};

void check(const sentencepiece::util::Status& status, const std::string& what) {
  if (!status.ok()) throw std::runtime_error(what + ": " + status.ToString());
}

// The distinct words (between spaces and tabs) and characters (UTF-8 code
// points: a lead byte and its continuation bytes) of the training text.
struct TextTypes {
  size_t words = 0, characters = 0;
};
TextTypes count_types(const std::vector<std::string_view>& text) {
  std::unordered_set<std::string_view> words, characters;
  for (const std::string_view line : text) {
    size_t begin = 0;
    while (begin < line.size()) {
      const size_t end = std::min(line.find_first_of(" \t", begin), line.size());
      if (end > begin) words.insert(line.substr(begin, end - begin));
      begin = end + 1;
    }
    for (size_t i = 0; i < line.size();) {
      size_t length = 1;
      while (i + length < line.size() && (static_cast<unsigned char>(line[i + length]) & 0xC0) == 0x80)
        ++length;
      characters.insert(line.substr(i, length));
      i += length;
    }
  }
  return {words.size(), characters.size()};
}

}  // namespace

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::train(
    const std::vector<std::string_view>& text, const SentencePieceOptions& options) {
  if (options.vocab_size <= kNumSpecialIds)
    throw std::invalid_argument("--spm-vocab-size must exceed the 4 special tokens");
  if (options.character_coverage <= 0 || options.character_coverage > 1)
    throw std::invalid_argument("--spm-character-coverage must be in (0, 1]");
  // Up to the default size (8000) the size is an upper bound: a small corpus
  // gives fewer pieces. Beyond it, a vocabulary of more pieces than the text
  // has words and characters is one of whole words and pieces seen once,
  // which SentencePiece would take long to build (its BPE on 20 000
  // sentences of rare words: over 11 minutes for 10^6): refused before its
  // work, naming what the text holds.
  const TextTypes types = count_types(text);
  const auto most = std::max(SentencePieceOptions{}.vocab_size,
                             static_cast<int64_t>(types.words + types.characters) + kNumSpecialIds);
  if (options.vocab_size > most)
    throw std::invalid_argument(
        "--spm-vocab-size " + std::to_string(options.vocab_size) +
        " is more pieces than the text it learns from has words and characters (" +
        std::to_string(types.words) + " distinct words, " + std::to_string(types.characters) +
        " characters, 4 special tokens: at most " + std::to_string(most) +
        " pieces): ask for fewer (subword vocabularies are usually 8000 to 64000, well below the "
        "words), or use --vocab word");
  const SpecialIds special;
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", settings::name_of(kSpmModelTypeNames, options.model_type)},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"hard_vocab_limit", "false"},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"input_sentence_size", "0"},  // all given: prepare_data samples already
      {"num_threads", std::to_string(options.num_threads)},
      {"pad_id", std::to_string(special.pad)},
      {"bos_id", std::to_string(special.bos)},
      {"eos_id", std::to_string(special.eos)},
      {"unk_id", std::to_string(special.unk)},
      {"pad_piece", std::string(kSpecialTokens[special.pad])},
      {"bos_piece", std::string(kSpecialTokens[special.bos])},
      {"eos_piece", std::string(kSpecialTokens[special.eos])},
      {"unk_piece", std::string(kSpecialTokens[special.unk])},
      {"minloglevel", "1"}};
  TextIterator sentences(text);
  std::string serialized;
  check(sentencepiece::SentencePieceTrainer::Train(args, &sentences, &serialized),
        "SentencePiece training");
  return std::unique_ptr<SentencePieceTokenizer>(
      new SentencePieceTokenizer(std::move(serialized), "the trained model"));
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(
    const std::filesystem::path& model_file) {
  std::ifstream in(model_file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read SentencePiece model " + model_file.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::unique_ptr<SentencePieceTokenizer>(
      new SentencePieceTokenizer(bytes.str(), model_file.string()));
}

SentencePieceTokenizer::SentencePieceTokenizer(std::string serialized_model,
                                               const std::string& origin)
    : serialized_(std::move(serialized_model)) {
  check(processor_.LoadFromSerializedProto(serialized_), "loading SentencePiece model " + origin);
  const SpecialIds special;
  for (int32_t id : {special.pad, special.bos, special.eos, special.unk}) {
    if (id >= processor_.GetPieceSize() || processor_.IdToPiece(id) != kSpecialTokens[id])
      throw std::runtime_error("SentencePiece model " + origin + ": id " + std::to_string(id) +
                               " must be " + std::string(kSpecialTokens[id]) +
                               " (train with --pad_id=0 --bos_id=1 --eos_id=2 --unk_id=3 "
                               "--pad_piece=<pad>)");
  }
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  check(processor_.Encode(text, &ids), "SentencePiece encoding");
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  const SpecialIds special;
  std::vector<int> kept;
  for (const int32_t id : ids) {
    if (id == special.eos) break;
    if (id != special.pad && id != special.bos) kept.push_back(id);
  }
  std::string text;
  check(processor_.Decode(kept, &text), "SentencePiece decoding");
  return text;
}

void SentencePieceTokenizer::save(const std::filesystem::path& model_file) const {
  {
    std::ofstream out(model_file, std::ios::binary);
    out << serialized_;
    if (!out.flush()) throw std::runtime_error("cannot write " + model_file.string());
  }
  std::ofstream vocab(std::filesystem::path(model_file).replace_extension(".vocab"));
  for (int id = 0; id < processor_.GetPieceSize(); ++id)
    vocab << processor_.IdToPiece(id) << '\t' << processor_.GetScore(id) << '\n';
  if (!vocab.flush())
    throw std::runtime_error("cannot write the .vocab beside " + model_file.string());
}

}  // namespace data
