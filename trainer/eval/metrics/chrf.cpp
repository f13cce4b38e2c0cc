#include "trainer/eval/metrics/chrf.h"

#include <stdexcept>

#include "trainer/eval/metrics/corpus.h"
#include "trainer/eval/metrics/ngram_counts.h"
#include "trainer/eval/metrics/python_str.h"
#include "trainer/eval/metrics/signature.h"

namespace eval::metrics {
namespace {

void check_options(const ChrfOptions& options) {
  if (options.char_order < 0 || options.word_order < 0 ||
      options.char_order + options.word_order == 0 || options.beta < 0) {
    throw std::invalid_argument(
        "chrF needs char_order, word_order >= 0 (not both 0) and beta >= 0");
  }
}

// Python's string.punctuation, the marks chrF++ cuts off words.
bool is_punctuation(char32_t c) {
  static constexpr std::u32string_view kPunctuation = U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  return kPunctuation.find(c) != std::u32string_view::npos;
}

// CHRF._remove_punctuation: the words of str.split(); a word of two or more
// characters loses a punctuation mark at its end or, failing that, at its
// start, which becomes a word of its own ("(hi)" -> "(hi", ")").
std::vector<std::u32string_view> chrf_words(std::u32string_view line) {
  std::vector<std::u32string_view> words;
  for (const std::u32string_view word : split_whitespace(line)) {
    if (word.size() > 1 && is_punctuation(word.back())) {
      words.push_back(word.substr(0, word.size() - 1));
      words.push_back(word.substr(word.size() - 1));
    } else if (word.size() > 1 && is_punctuation(word.front())) {
      words.push_back(word.substr(0, 1));
      words.push_back(word.substr(1));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

// A segment's n-gram counts: character orders 1..char_order, then word
// orders 1..word_order (helpers.extract_all_char_ngrams, extract_word_ngrams).
std::vector<NgramCounts> segment_ngrams(std::u32string_view line, const ChrfOptions& options) {
  const std::u32string cased = options.lowercase ? lowercase(line) : std::u32string(line);
  const std::u32string chars = options.whitespace ? cased : join(split_whitespace(cased), U"");
  std::vector<NgramCounts> ngrams;
  for (int n = 1; n <= options.char_order; ++n) {
    ngrams.push_back(char_ngrams(chars, static_cast<size_t>(n)));
  }
  const std::vector<std::u32string_view> words = chrf_words(cased);
  for (int n = 1; n <= options.word_order; ++n) {
    ngrams.push_back(word_ngrams(words, static_cast<size_t>(n)));
  }
  return ngrams;
}

using ChrfStatistics = std::vector<ChrfOrderStatistics>;  // per order

// CHRF._compute_f_score.
double f_score(const ChrfStatistics& statistics, const ChrfOptions& options) {
  constexpr double kEps = 1e-16;
  const double factor = static_cast<double>(options.beta) * options.beta;
  double eps_score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (const ChrfOrderStatistics& order : statistics) {
    const double prec = order.hyp > 0 ? static_cast<double>(order.match) / order.hyp : kEps;
    const double rec = order.ref > 0 ? static_cast<double>(order.match) / order.ref : kEps;
    const double denom = factor * prec + rec;
    eps_score += denom > 0 ? (1 + factor) * prec * rec / denom : kEps;
    if (order.hyp > 0 && order.ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * eps_score / static_cast<double>(statistics.size());
  if (effective_order > 0) {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec == 0) return 0.0;
  return 100 * ((1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec));
}

// CHRF._compute_segment_statistics: the statistics against the reference
// with the best F-score (the first of equals).
ChrfStatistics segment_statistics(const Segment& segment, const ChrfOptions& options) {
  const std::vector<NgramCounts> hyp = segment_ngrams(segment.hypothesis, options);
  ChrfStatistics best;
  double best_f = -1.0;
  for (const std::u32string& reference : segment.references) {
    const std::vector<NgramCounts> ref = segment_ngrams(reference, options);
    ChrfStatistics statistics(hyp.size());
    for (size_t i = 0; i < hyp.size(); ++i) {
      statistics[i].hyp = ref[i].empty() ? 0 : total_count(hyp[i]);
      statistics[i].ref = total_count(ref[i]);
      statistics[i].match = clipped_matches(hyp[i], ref[i]);
    }
    const double f = f_score(statistics, options);
    if (f > best_f) {
      best_f = f;
      best = statistics;
    }
  }
  return best;
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const ChrfOptions& options) {
  check_options(options);
  ChrfStatistics corpus(options.char_order + options.word_order);
  for (const Segment& segment : corpus_segments(hypotheses, references)) {
    const ChrfStatistics statistics = segment_statistics(segment, options);
    for (size_t i = 0; i < corpus.size(); ++i) {
      corpus[i].hyp += statistics[i].hyp;
      corpus[i].ref += statistics[i].ref;
      corpus[i].match += statistics[i].match;
    }
  }
  ChrfScore result;
  result.score = f_score(corpus, options);
  result.statistics = corpus;
  result.name = "chrF" + std::to_string(options.beta) + std::string(options.word_order, '+');
  result.signature = chrf_signature(options, references.size());
  return result;
}

std::string chrf_signature(const ChrfOptions& options, size_t num_references) {
  return format_signature({{"nrefs", std::to_string(num_references)},
                           {"case", options.lowercase ? "lc" : "mixed"},
                           {"eff", options.eps_smoothing ? "no" : "yes"},
                           {"nc", std::to_string(options.char_order)},
                           {"nw", std::to_string(options.word_order)},
                           {"space", options.whitespace ? "yes" : "no"}});
}

}  // namespace eval::metrics
