#include "data_pipeline/prepare/synthetic.h"

#include <algorithm>
#include <stdexcept>

#include "data_pipeline/random.h"

namespace data {

namespace {

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) text += ' ';
    text += word;
  }
  return text;
}

void check(const SyntheticOptions& options) {
  if (options.symbols < 1) throw std::invalid_argument("synthetic task needs at least 1 symbol");
  if (options.min_len < 1 || options.min_len > options.max_len) {
    throw std::invalid_argument("synthetic lengths need 1 <= min_len <= max_len, got " +
                                std::to_string(options.min_len) + " and " +
                                std::to_string(options.max_len));
  }
}

}  // namespace

SyntheticTask parse_synthetic_task(const std::string& name) {
  if (name == "copy") return SyntheticTask::kCopy;
  if (name == "reverse") return SyntheticTask::kReverse;
  throw std::invalid_argument("unknown synthetic task '" + name + "' (expected copy or reverse)");
}

std::vector<std::string> synthetic_symbols(int64_t symbols) {
  std::vector<std::string> words;
  for (int64_t i = 0; i < symbols; ++i) words.push_back("s" + std::to_string(i));
  return words;
}

ParallelText make_synthetic(SyntheticTask task, const SyntheticOptions& options, int64_t size,
                            uint64_t seed) {
  check(options);
  const auto symbols = synthetic_symbols(options.symbols);
  Rng rng(seed);
  ParallelText text;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<std::string> words(rng.between(options.min_len, options.max_len));
    for (auto& word : words) word = symbols[rng.below(symbols.size())];
    text.src.push_back(join(words));
    if (task == SyntheticTask::kReverse) std::reverse(words.begin(), words.end());
    text.tgt.push_back(join(words));
  }
  return text;
}

}  // namespace data
