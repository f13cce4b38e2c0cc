#include "data_pipeline/prepare/text_lines.h"

#include <algorithm>
#include <stdexcept>

#include "data_pipeline/text_line.h"
#include "data_pipeline/utf8.h"

namespace data {

namespace {

std::ifstream open_text(const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file))
    throw std::runtime_error("input file " + file.string() + " does not exist or is not a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open input file " + file.string());
  // gzip's magic bytes: read as text, it fails later for another reason
  // ("line counts differ", invalid UTF-8) that does not say why.
  char magic[2] = {};
  if (in.read(magic, 2) && magic[0] == '\x1f' && magic[1] == '\x8b')
    throw std::runtime_error("input file " + file.string() +
                             " is gzip-compressed: decompress it first (zcat " + file.string() +
                             " > " + file.stem().string() + ")");
  in.clear();
  in.seekg(0);
  return in;
}

}  // namespace

int64_t count_lines(const std::filesystem::path& file) {
  std::ifstream in = open_text(file);
  int64_t lines = 0;
  char buffer[1 << 16];
  bool pending = false;  // a last line without "\n"
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) lines += buffer[i] == '\n';
    pending = buffer[in.gcount() - 1] != '\n';
  }
  if (in.bad()) throw std::runtime_error("error reading input file " + file.string());
  return lines + (pending ? 1 : 0);
}

LineReader::LineReader(std::filesystem::path file)
    : file_(std::move(file)), in_(open_text(file_)) {}

void LineReader::next(std::string& out) {
  ++line_;
  if (!read_text_line(in_, out))
    throw std::runtime_error("input file " + file_.string() + " ended before line " +
                             std::to_string(line_) + " (changed while being read?)");
  const size_t bad = find_invalid_utf8(out);
  if (bad != std::string::npos)
    throw std::runtime_error(where() + ": invalid UTF-8 at byte " + std::to_string(bad));
}

std::string LineReader::where() const { return file_.string() + ":" + std::to_string(line_); }

void remove_spaces(std::string& text) {
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; }),
             text.end());
}

}  // namespace data
