// SHA-256 of a file, as lowercase hex (the same string `sha256sum` prints).
#pragma once
#include <filesystem>
#include <string>

namespace data {

std::string sha256_file(const std::filesystem::path& file);

}  // namespace data
