#include "data_pipeline/line_file.h"

#include <fstream>
#include <stdexcept>
#include "base/file_write.h"

namespace data {

std::vector<std::string> read_lines(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + what + " file " + file.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  if (in.bad()) throw std::runtime_error("cannot read " + what + " file " + file.string());
  return lines;
}

void write_lines(const std::filesystem::path& file, const std::vector<std::string>& lines,
                 const std::string& what) {
  std::string text;
  for (const auto& line : lines) text += line + '\n';
  try {
    base::write_file(file, text);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + " file: " + e.what());
  }
}

}  // namespace data
