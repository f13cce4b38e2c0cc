#include "data_pipeline/vocab.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

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

Vocab Vocab::from_counts(const std::unordered_map<std::string, int64_t>& counts,
                         int64_t min_count, int64_t max_size) {
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
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open vocabulary file " + file.string());
  std::vector<std::string> tokens;
  std::string line;
  int64_t number = 0;  // of the line just read, from 1
  while (std::getline(in, line)) {
    ++number;
    const auto where = [&] { return file.string() + ":" + std::to_string(number); };
    if (number <= kNumSpecialIds) {
      if (line != kSpecialTokens[number - 1]) {
        throw std::runtime_error(where() + ": expected special token '" +
                                 std::string(kSpecialTokens[number - 1]) + "', found '" + line + "'");
      }
      continue;
    }
    tokens.push_back(line);
  }
  if (in.bad()) throw std::runtime_error("cannot read vocabulary file " + file.string());
  if (number < kNumSpecialIds) {
    throw std::runtime_error(file.string() + ": has " + std::to_string(number) +
                             " lines, fewer than the " + std::to_string(kNumSpecialIds) +
                             " special tokens");
  }
  try {
    return Vocab(std::move(tokens));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

void Vocab::save(const std::filesystem::path& file) const {
  std::ofstream out(file, std::ios::binary);
  for (const auto& token : tokens_) out << token << '\n';
  if (!out.flush()) throw std::runtime_error("cannot write vocabulary file " + file.string());
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
