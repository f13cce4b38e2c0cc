#include "data_pipeline/prepare/synthetic.h"

#include <algorithm>
#include <stdexcept>

#include "data_pipeline/random.h"

namespace data {

namespace {

std::string join(const std::vector<int64_t>& sequence, const std::vector<std::string>& symbols) {
  std::string text;
  for (const int64_t symbol : sequence) {
    if (!text.empty()) text += ' ';
    text += symbols[symbol];
  }
  return text;
}

void check(SyntheticTask task, const SyntheticOptions& options) {
  if (options.symbols < 1) throw std::invalid_argument("synthetic task needs at least 1 symbol");
  if (options.min_len < 1 || options.min_len > options.max_len) {
    throw std::invalid_argument("synthetic lengths need 1 <= min_len <= max_len, got " +
                                std::to_string(options.min_len) + " and " +
                                std::to_string(options.max_len));
  }
  if (task == SyntheticTask::kMajority &&
      (options.classes < 2 || options.classes > options.symbols)) {
    throw std::invalid_argument("majority needs 2 <= classes <= symbols, got " +
                                std::to_string(options.classes) + " classes of " +
                                std::to_string(options.symbols) + " symbols");
  }
}

// Symbol indices: a uniform length, then uniform symbols.
std::vector<int64_t> draw(Rng& rng, const SyntheticOptions& options) {
  std::vector<int64_t> sequence(rng.between(options.min_len, options.max_len));
  for (auto& symbol : sequence) symbol = static_cast<int64_t>(rng.below(options.symbols));
  return sequence;
}

// The class symbol (index < classes) occurring most often, or -1 when none
// occurs or the most frequent ones tie.
int64_t majority_class(const std::vector<int64_t>& sequence, int64_t classes) {
  std::vector<int64_t> counts(classes, 0);
  for (const int64_t symbol : sequence)
    if (symbol < classes) ++counts[symbol];
  const auto top = std::max_element(counts.begin(), counts.end());
  if (*top == 0 || std::count(counts.begin(), counts.end(), *top) > 1) return -1;
  return top - counts.begin();
}

}  // namespace

std::vector<std::string> synthetic_symbols(int64_t symbols) {
  std::vector<std::string> words;
  for (int64_t i = 0; i < symbols; ++i) words.push_back("s" + std::to_string(i));
  return words;
}

ParallelText make_synthetic(SyntheticTask task, const SyntheticOptions& options, int64_t size,
                            uint64_t seed) {
  check(task, options);
  const auto symbols = synthetic_symbols(options.symbols);
  Rng rng(seed);
  ParallelText text;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<int64_t> sequence = draw(rng, options);
    int64_t label = -1;
    while (task == SyntheticTask::kMajority &&
           (label = majority_class(sequence, options.classes)) < 0) {
      sequence = draw(rng, options);
    }
    text.src.push_back(join(sequence, symbols));
    switch (task) {
      case SyntheticTask::kCopy: text.tgt.push_back(text.src.back()); break;
      case SyntheticTask::kReverse:
        std::reverse(sequence.begin(), sequence.end());
        text.tgt.push_back(join(sequence, symbols));
        break;
      case SyntheticTask::kMajority: text.tgt.push_back(symbols[label]); break;
    }
  }
  return text;
}

}  // namespace data
