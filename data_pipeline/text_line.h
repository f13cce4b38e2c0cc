// The one rule for the line ends of text a user gives — corpora for
// prepare_data, sentences for `evaluate --translate` and `tokenize`, the
// reference files BLEU is scored against: a line ends in "\n" or "\r\n", and
// neither is part of it (a Windows editor's "\r" would otherwise become a
// token of its own: <unk> on a character vocabulary). Not the `score` tool's:
// it reads files as sacreBLEU's command line does, which keeps the "\r"
// (its chrF with whitespace counts it), and is tested equal to it.
#pragma once
#include <istream>
#include <string>

namespace data {

// std::getline, and a "\r" before the "\n" dropped.
inline bool read_text_line(std::istream& in, std::string& line) {
  if (!std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace data
