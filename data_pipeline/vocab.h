// A vocabulary: token strings <-> ids, with the four specials first.
//
// File format (vocab.txt, or vocab.src.txt + vocab.tgt.txt), UTF-8:
//
//     <pad>        id 0
//     <s>          id 1
//     </s>         id 2
//     <unk>        id 3
//     the          id 4, then every other token, one per line
//
// Lines are taken verbatim, not trimmed: a character vocabulary has a line
// holding a single space.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace data {

class Vocab {
 public:
  // The specials, then `tokens` in order (ids 4, 5, ...). Throws
  // std::invalid_argument on a duplicate, an empty token or a special's spelling.
  explicit Vocab(std::vector<std::string> tokens);

  // Tokens counted at least `min_count` times, most frequent first (ties in
  // byte order, so the result is deterministic), at most `max_size` entries
  // including the specials (0 = no limit).
  static Vocab from_counts(const std::unordered_map<std::string, int64_t>& counts,
                           int64_t min_count, int64_t max_size);

  static Vocab load(const std::filesystem::path& file);
  void save(const std::filesystem::path& file) const;

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  // The id of a (non-special) token, or unk. A text token that happens to be
  // spelled "<s>" is unknown: specials only come from the batcher.
  int32_t id(std::string_view token) const;
  // The spelling of `id`; throws std::out_of_range outside [0, size).
  const std::string& token(int32_t id) const;

 private:
  std::vector<std::string> tokens_;               // [size], index = id
  std::unordered_map<std::string, int32_t> ids_;  // non-special tokens only
};

}  // namespace data
