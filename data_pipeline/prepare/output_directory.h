// The dataset directory's publication: built in a new directory beside
// --out that no other job uses, then renamed into place whole, so that a
// reader sees no dataset or a complete one.
#pragma once
#include <filesystem>
#include <string>

namespace data {

// "data/copy/" -> "data/copy": sibling paths like "<out>.tmp-XXXXXX" need a file name.
std::filesystem::path without_trailing_separator(const std::filesystem::path& out);

// Refuses an `out` that is a file, or a non-empty directory without `force`.
void check_output(const std::filesystem::path& out, bool force);

// A new directory "<out>.tmp-XXXXXX" of a name no other job uses.
std::string unique_directory_beside(const std::filesystem::path& out);

// Renames the finished `temp` to `out` (with `force`, over an existing one).
void publish(const std::filesystem::path& temp, const std::filesystem::path& out, bool force);

}  // namespace data
