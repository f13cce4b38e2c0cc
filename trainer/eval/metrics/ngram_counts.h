// N-gram counts, as sacreBLEU's helpers build them (sacrebleu/metrics/helpers.py)
// with collections.Counter: BLEU counts word n-grams, chrF character n-grams
// (and, for chrF++, word n-grams too).
//
// A word n-gram is keyed by its words joined by one space; words never hold
// whitespace, so the key is unambiguous.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace eval::metrics {

using NgramCounts = std::unordered_map<std::u32string, int64_t>;

// Counter(' '.join(words[i:i + n]) for i in range(len(words) - n + 1))
NgramCounts word_ngrams(const std::vector<std::u32string_view>& words, size_t n);

// Counter(text[i:i + n] for i in range(len(text) - n + 1)): code points.
NgramCounts char_ngrams(std::u32string_view text, size_t n);

// sum(counts.values())
int64_t total_count(const NgramCounts& counts);

// The hypothesis n-grams found in the reference, each counted at most as
// often as the reference has it: sum over g of min(hyp[g], ref[g]).
int64_t clipped_matches(const NgramCounts& hyp, const NgramCounts& ref);

// into[g] = max(into[g], other[g]) for every g: what several references
// allow together (BLEU's multi-reference clipping).
void merge_max(NgramCounts& into, const NgramCounts& other);

}  // namespace eval::metrics
