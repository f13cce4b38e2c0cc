// Small text files of one entry a line (vocabularies, label sets), read and
// written verbatim: every line ends in "\n", nothing is trimmed.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace data {

// The lines of `file` without their "\n". Errors name `what` and the file
// ("cannot open vocabulary file data/x/vocab.txt").
std::vector<std::string> read_lines(const std::filesystem::path& file, const std::string& what);
void write_lines(const std::filesystem::path& file, const std::vector<std::string>& lines,
                 const std::string& what);

}  // namespace data
