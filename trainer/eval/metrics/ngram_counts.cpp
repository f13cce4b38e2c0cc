#include "trainer/eval/metrics/ngram_counts.h"

#include <algorithm>

#include "trainer/eval/metrics/python_str.h"

namespace eval::metrics {

NgramCounts word_ngrams(const std::vector<std::u32string_view>& words, size_t n) {
  NgramCounts counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    const std::vector<std::u32string_view> ngram(words.begin() + i, words.begin() + i + n);
    ++counts[join(ngram, U" ")];
  }
  return counts;
}

NgramCounts char_ngrams(std::u32string_view text, size_t n) {
  NgramCounts counts;
  for (size_t i = 0; i + n <= text.size(); ++i) ++counts[std::u32string(text.substr(i, n))];
  return counts;
}

int64_t total_count(const NgramCounts& counts) {
  int64_t total = 0;
  for (const auto& [ngram, count] : counts) total += count;
  return total;
}

int64_t clipped_matches(const NgramCounts& hyp, const NgramCounts& ref) {
  int64_t matches = 0;
  for (const auto& [ngram, count] : hyp) {
    const auto found = ref.find(ngram);
    if (found != ref.end()) matches += std::min(count, found->second);
  }
  return matches;
}

void merge_max(NgramCounts& into, const NgramCounts& other) {
  for (const auto& [ngram, count] : other) {
    int64_t& merged = into[ngram];
    merged = std::max(merged, count);
  }
}

}  // namespace eval::metrics
