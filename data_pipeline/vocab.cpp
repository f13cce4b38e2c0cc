#include "data_pipeline/vocab.h"

#include <algorithm>
#include <stdexcept>

#include "data_pipeline/line_file.h"
#include "data_pipeline/special_ids.h"

namespace data {

Vocab::Vocab(std::vector<std::string> tokens) {
  tokens_.assign(kSpecialTokens.begin(), kSpecialTokens.end());
  for (auto& token : tokens) {
    if (token.empty()) throw std::invalid_argument("empty vocabulary token");
    if (std::find(kSpecialTokens.begin(), kSpecialTokens.end(), token) != kSpecialTokens.end()) {
      throw std::invalid_argument("vocabulary token '" + token + "' is a special token");
    }
    const auto id = static_cast<int32_t>(tokens_.size());
    if (!ids_.emplace(token, id).second) {
      throw std::invalid_argument("duplicate vocabulary token '" + token + "'");
    }
    tokens_.push_back(std::move(token));
  }
}

Vocab Vocab::from_counts(const std::unordered_map<std::string, int64_t>& counts, int64_t min_count,
                         int64_t max_size) {
  if (max_size != 0 && max_size <= kNumSpecialIds) {
    throw std::invalid_argument("maximum vocabulary size " + std::to_string(max_size) +
                                " leaves no room beyond the " + std::to_string(kNumSpecialIds) +
                                " special tokens");
  }
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [token, count] : counts) {
    if (count >= min_count) kept.emplace_back(token, count);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_size != 0 && static_cast<int64_t>(kept.size()) > max_size - kNumSpecialIds) {
    kept.resize(max_size - kNumSpecialIds);
  }
  std::vector<std::string> tokens;
  tokens.reserve(kept.size());
  for (auto& entry : kept) tokens.push_back(std::move(entry.first));
  return Vocab(std::move(tokens));
}

Vocab Vocab::load(const std::filesystem::path& file) {
  std::vector<std::string> lines = read_lines(file, "vocabulary");
  for (size_t i = 0; i < lines.size() && i < kSpecialTokens.size(); ++i) {
    if (lines[i] != kSpecialTokens[i]) {
      throw std::runtime_error(file.string() + ":" + std::to_string(i + 1) +
                               ": expected special token '" + std::string(kSpecialTokens[i]) +
                               "', found '" + lines[i] + "'");
    }
  }
  if (lines.size() < kSpecialTokens.size()) {
    throw std::runtime_error(file.string() + ": has " + std::to_string(lines.size()) +
                             " lines, fewer than the " + std::to_string(kNumSpecialIds) +
                             " special tokens");
  }
  try {
    return Vocab({lines.begin() + kNumSpecialIds, lines.end()});
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

void Vocab::save(const std::filesystem::path& file) const {
  write_lines(file, tokens_, "vocabulary");
}

int32_t Vocab::id(std::string_view token) const {
  const auto found = ids_.find(std::string(token));
  return found == ids_.end() ? SpecialIds{}.unk : found->second;
}

const std::string& Vocab::token(int32_t id) const {
  if (id < 0 || id >= size()) {
    throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary of " +
                            std::to_string(size()));
  }
  return tokens_[id];
}

}  // namespace data
