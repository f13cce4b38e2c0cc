#include "data_pipeline/line_file.h"

#include <fstream>
#include <stdexcept>

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
  std::ofstream out(file, std::ios::binary);
  for (const auto& line : lines) out << line << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write " + what + " file " + file.string());
}

}  // namespace data
