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

namespace {

// The examples of a task in order: each draw continues the one generator, so
// example i depends on the draws of examples 0 .. i-1.
class SyntheticPairs : public PairSource {
 public:
  SyntheticPairs(SyntheticTask task, const SyntheticOptions& options, int64_t size, uint64_t seed)
      : task_(task),
        options_(options),
        size_(size),
        seed_(seed),
        symbols_(synthetic_symbols(options.symbols)) {
    check(task, options);
  }

  int64_t size() const override { return size_; }

  // Replays the generator from example 0, writing out [begin, end) only:
  // nothing is held, and a rank's range costs the draws before it (cheap:
  // a few generator calls per example).
  void read(int64_t begin, int64_t end, CleaningReport&,
            const std::function<void(SentencePair&)>& visit) const override {
    Rng rng(seed_);
    SentencePair pair;
    for (int64_t i = 0; i < end; ++i) {
      std::vector<int64_t> sequence = draw(rng, options_);
      int64_t label = -1;
      while (task_ == SyntheticTask::kMajority &&
             (label = majority_class(sequence, options_.classes)) < 0)
        sequence = draw(rng, options_);
      if (i < begin) continue;
      pair.id = i;
      pair.src = join(sequence, symbols_);
      switch (task_) {
        case SyntheticTask::kCopy: pair.tgt = pair.src; break;
        case SyntheticTask::kReverse:
          std::reverse(sequence.begin(), sequence.end());
          pair.tgt = join(sequence, symbols_);
          break;
        case SyntheticTask::kMajority: pair.tgt = symbols_[label]; break;
      }
      visit(pair);
    }
  }

 private:
  SyntheticTask task_;
  SyntheticOptions options_;
  int64_t size_;
  uint64_t seed_;
  std::vector<std::string> symbols_;
};

}  // namespace

std::unique_ptr<PairSource> synthetic_pairs(SyntheticTask task, const SyntheticOptions& options,
                                            int64_t size, uint64_t seed) {
  return std::make_unique<SyntheticPairs>(task, options, size, seed);
}

}  // namespace data
