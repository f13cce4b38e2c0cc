// SHA-256, as lowercase hex (the same string `sha256sum` prints): of a file,
// or of bytes fed in pieces.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>

struct evp_md_ctx_st;

namespace data {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* bytes, size_t size);
  std::string hex();  // the digest of everything fed; call once

 private:
  evp_md_ctx_st* context_;
};

std::string sha256_file(const std::filesystem::path& file);

}  // namespace data
