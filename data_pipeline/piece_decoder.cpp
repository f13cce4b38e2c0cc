#include "data_pipeline/piece_decoder.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "data_pipeline/special_ids.h"
#include "base/file_write.h"

namespace data {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 ▁

// "<0xAB>" -> 0xAB; -1 for any other piece.
int byte_of(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  try {
    return std::stoi(piece.substr(3, 2), nullptr, 16);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

PieceDecoder::PieceDecoder(const std::filesystem::path& vocab_file) {
  std::ifstream in(vocab_file);
  if (!in) throw std::runtime_error("cannot read SentencePiece vocabulary " + vocab_file.string());
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos)
      throw std::runtime_error(vocab_file.string() + ":" + std::to_string(pieces_.size() + 1) +
                               ": expected 'piece<TAB>score'");
    pieces_.push_back(line.substr(0, tab));
    scores_.push_back(line.substr(tab + 1));
  }
  const SpecialIds special;
  for (int32_t id : {special.pad, special.bos, special.eos, special.unk})
    if (id >= vocab_size() || pieces_[id] != kSpecialTokens[id])
      throw std::runtime_error(vocab_file.string() + ": id " + std::to_string(id) + " must be " +
                               std::string(kSpecialTokens[id]));
}

std::vector<int32_t> PieceDecoder::encode(std::string_view) const {
  throw std::logic_error(
      "SentencePiece encoding needs libsentencepiece, which only prepare_data "
      "links (it cannot share a process with LibTorch)");
}

std::string PieceDecoder::decode(const std::vector<int32_t>& ids) const {
  const SpecialIds special;
  std::string text;
  for (const int32_t id : ids) {
    if (id == special.eos) break;
    if (id == special.pad || id == special.bos) continue;
    if (id < 0 || id >= vocab_size() || id == special.unk) {
      text += "<unk>";
      continue;
    }
    const std::string& piece = pieces_[id];
    const int byte = byte_of(piece);
    if (byte >= 0) {
      text += static_cast<char>(byte);
      continue;
    }
    for (size_t pos = 0; pos < piece.size();) {  // ▁ -> ' '
      if (piece.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
        text += ' ';
        pos += kSpaceMark.size();
      } else {
        text += piece[pos++];
      }
    }
  }
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);  // the dummy prefix
  return text;
}

void PieceDecoder::save(const std::filesystem::path& vocab_file) const {
  std::ostringstream text;
  for (size_t id = 0; id < pieces_.size(); ++id) text << pieces_[id] << '\t' << scores_[id] << '\n';
  base::write_file(vocab_file, text.str());
}

std::filesystem::path PieceDecoder::vocab_file_of(const std::filesystem::path& model_file) {
  return std::filesystem::path(model_file).replace_extension(".vocab");
}

}  // namespace data
