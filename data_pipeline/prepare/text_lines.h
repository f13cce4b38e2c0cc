// Input text files, line by line, for the text sources (parallel_text.h,
// labeled_text.h): lines end in "\n" or "\r\n", must be valid UTF-8, and
// errors name the file and the line.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace data {

// The number of lines of `file` (a last line without "\n" counts). Throws,
// naming the file, when it is missing or cannot be read.
int64_t count_lines(const std::filesystem::path& file);

class LineReader {
 public:
  explicit LineReader(std::filesystem::path file);  // throws naming the file

  // The next line, without its line end, into `out`. Throws "file:line:
  // invalid UTF-8 at byte B", or when the file ends early (changed while
  // being read).
  void next(std::string& out);
  // "file:line" of the line last read, for error messages.
  std::string where() const;

 private:
  std::filesystem::path file_;
  std::ifstream in_;
  int64_t line_ = 0;  // of the line last read, from 1
};

// Removes every space and tab: "晚 风 摇 树" -> "晚风摇树". For text written
// with spaces between its characters, as the public couplet corpora are.
void remove_spaces(std::string& text);

}  // namespace data
