#include "trainer/eval/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "trainer/eval/metrics/bleu_tokenizers.h"
#include "trainer/eval/metrics/corpus.h"
#include "trainer/eval/metrics/ngram_counts.h"
#include "trainer/eval/metrics/python_str.h"
#include "trainer/eval/metrics/signature.h"

namespace eval::metrics {
namespace {

// The smoothing value of floor and add-k (BLEU.SMOOTH_DEFAULTS), or none for
// exp and none; throws for an unknown method.
std::optional<double> smoothing_value(const BleuOptions& options) {
  const std::string& method = options.smooth_method;
  if (method == "floor") return options.smooth_value.value_or(0.1);
  if (method == "add-k") return options.smooth_value.value_or(1.0);
  if (method == "exp" || method == "none") return std::nullopt;
  throw std::invalid_argument("unknown BLEU smoothing method '" + method +
                              "' (known: exp, floor, add-k, none)");
}

void check_options(const BleuOptions& options) {
  bleu_tokenizer(options.tokenize);
  smoothing_value(options);
  if (options.max_ngram_order < 1) {
    throw std::invalid_argument("BLEU max_ngram_order must be at least 1, not " +
                                std::to_string(options.max_ngram_order));
  }
}

// utils.my_log: log with log(0) floored to -9999999999.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// A segment's words and its n-grams of orders 1..max (helpers.extract_all_word_ngrams).
struct SegmentNgrams {
  int64_t length = 0;
  std::vector<NgramCounts> by_order;
};

SegmentNgrams segment_ngrams(std::u32string_view line, const BleuOptions& options) {
  const std::u32string cased = options.lowercase ? lowercase(line) : std::u32string(line);
  const std::u32string tokenized = bleu_tokenizer(options.tokenize)(rstrip(cased));
  const std::vector<std::u32string_view> words = split_whitespace(tokenized);
  SegmentNgrams ngrams;
  ngrams.length = static_cast<int64_t>(words.size());
  for (int n = 1; n <= options.max_ngram_order; ++n) {
    ngrams.by_order.push_back(word_ngrams(words, static_cast<size_t>(n)));
  }
  return ngrams;
}

// BLEU._get_closest_ref_len: the reference length nearest the hypothesis
// length, the shorter of two equally near.
int64_t closest_reference_length(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest = ref_lens.front();
  for (const int64_t ref_len : ref_lens) {
    const int64_t diff = std::abs(hyp_len - ref_len), best = std::abs(hyp_len - closest);
    if (diff < best || (diff == best && ref_len < closest)) closest = ref_len;
  }
  return closest;
}

// Adds one segment's statistics (BLEU._compute_segment_statistics), the
// references' n-gram counts merged by maximum.
void add_segment(const Segment& segment, const BleuOptions& options, BleuStatistics& statistics) {
  const SegmentNgrams hyp = segment_ngrams(segment.hypothesis, options);
  std::vector<NgramCounts> ref_ngrams(options.max_ngram_order);
  std::vector<int64_t> ref_lens;
  for (const std::u32string& reference : segment.references) {
    const SegmentNgrams ref = segment_ngrams(reference, options);
    ref_lens.push_back(ref.length);
    for (int n = 0; n < options.max_ngram_order; ++n) merge_max(ref_ngrams[n], ref.by_order[n]);
  }
  statistics.sys_len += hyp.length;
  statistics.ref_len += closest_reference_length(hyp.length, ref_lens);
  for (int n = 0; n < options.max_ngram_order; ++n) {
    statistics.totals[n] += total_count(hyp.by_order[n]);
    statistics.counts[n] += clipped_matches(hyp.by_order[n], ref_ngrams[n]);
  }
}

}  // namespace

BleuOptions sentence_bleu_defaults() {
  BleuOptions options;
  options.effective_order = true;
  return options;
}

BleuScore compute_bleu(const BleuStatistics& statistics, const BleuOptions& options) {
  check_options(options);
  const std::optional<double> smooth_value = smoothing_value(options);
  const int max_order = options.max_ngram_order;
  if (statistics.counts.size() != static_cast<size_t>(max_order) ||
      statistics.totals.size() != static_cast<size_t>(max_order)) {
    throw std::invalid_argument("BLEU statistics need counts and totals for " +
                                std::to_string(max_order) + " orders");
  }
  BleuScore result;
  result.counts = statistics.counts;
  result.totals = statistics.totals;
  result.sys_len = statistics.sys_len;
  result.ref_len = statistics.ref_len;
  result.precisions.assign(max_order, 0.0);

  result.bp = 1.0;
  if (statistics.sys_len < statistics.ref_len) {
    result.bp = statistics.sys_len > 0 ? std::exp(1.0 - static_cast<double>(statistics.ref_len) /
                                                            static_cast<double>(statistics.sys_len))
                                       : 0.0;
  }
  const auto& counts = statistics.counts;
  if (std::all_of(counts.begin(), counts.end(), [](int64_t c) { return c == 0; })) {
    return result;  // no match at all: 0, whatever the smoothing
  }

  double mteval_divisor = 1.0;  // exp smoothing: doubles at each zero count
  int effective_order = max_order;
  for (int n = 1; n <= max_order; ++n) {
    double correct = static_cast<double>(counts[n - 1]);
    double total = static_cast<double>(statistics.totals[n - 1]);
    if (options.smooth_method == "add-k" && n > 1) {
      correct += *smooth_value;
      total += *smooth_value;
    }
    if (total == 0) break;
    if (options.effective_order) effective_order = n;
    double& precision = result.precisions[n - 1];
    if (correct != 0) {
      precision = 100.0 * correct / total;
    } else if (options.smooth_method == "exp") {
      mteval_divisor *= 2;
      precision = 100.0 / (mteval_divisor * total);
    } else if (options.smooth_method == "floor") {
      precision = 100.0 * *smooth_value / total;
    }  // "none" (and add-k at n = 1): a zero count stays 0
  }
  double log_sum = 0.0;
  for (int n = 0; n < effective_order; ++n) log_sum += floored_log(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / effective_order);
  return result;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options) {
  check_options(options);
  BleuStatistics statistics;
  statistics.counts.assign(options.max_ngram_order, 0);
  statistics.totals.assign(options.max_ngram_order, 0);
  for (const Segment& segment : corpus_segments(hypotheses, references)) {
    add_segment(segment, options, statistics);
  }
  BleuScore result = compute_bleu(statistics, options);
  result.signature = bleu_signature(options, references.size());
  return result;
}

BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options) {
  std::vector<std::vector<std::string>> streams;
  for (const std::string& reference : references) streams.push_back({reference});
  return corpus_bleu({hypothesis}, streams, options);
}

std::string bleu_signature(const BleuOptions& options, size_t num_references) {
  std::string smooth = options.smooth_method;
  if (const std::optional<double> value = smoothing_value(options)) {
    char bracketed[32];
    std::snprintf(bracketed, sizeof bracketed, "[%.2f]", *value);
    smooth += bracketed;
  }
  return format_signature({{"nrefs", std::to_string(num_references)},
                           {"case", options.lowercase ? "lc" : "mixed"},
                           {"eff", options.effective_order ? "yes" : "no"},
                           {"tok", options.tokenize},
                           {"smooth", smooth}});
}

}  // namespace eval::metrics
