#include "data_pipeline/prepare/parallel_text.h"

#include <fstream>
#include <stdexcept>

#include "data_pipeline/utf8.h"

namespace data {

std::vector<std::string> read_lines(const std::filesystem::path& file) {
  if (!std::filesystem::is_regular_file(file)) {
    throw std::runtime_error("input file " + file.string() + " does not exist or is not a file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open input file " + file.string());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t bad = find_invalid_utf8(line);
    if (bad != std::string::npos) {
      throw std::runtime_error(file.string() + ":" + std::to_string(lines.size() + 1) +
                               ": invalid UTF-8 at byte " + std::to_string(bad));
    }
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw std::runtime_error("error reading input file " + file.string());
  return lines;
}

ParallelText read_parallel(const std::filesystem::path& src_file,
                           const std::filesystem::path& tgt_file) {
  const auto read_nonempty = [](const std::filesystem::path& file) {
    auto lines = read_lines(file);
    if (lines.empty()) throw std::runtime_error("input file " + file.string() + " is empty");
    return lines;
  };
  ParallelText text{read_nonempty(src_file), read_nonempty(tgt_file)};
  if (text.src.size() != text.tgt.size()) {
    throw std::runtime_error("line counts differ: " + src_file.string() + " has " +
                             std::to_string(text.src.size()) + " lines, " + tgt_file.string() +
                             " has " + std::to_string(text.tgt.size()));
  }
  return text;
}

}  // namespace data
