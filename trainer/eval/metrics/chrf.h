// chrF (Popović 2015) and chrF++ (Popović 2017) as sacreBLEU 2.x computes
// them (sacrebleu/metrics/chrf.py; sacrebleu.corpus_chrf).
//
// N-grams per segment: character n-grams of orders 1..char_order over the
// code points of the line with its whitespace removed (kept if `whitespace`),
// and for chrF++ word n-grams of orders 1..word_order over its
// whitespace-separated words, a punctuation mark cut off each word's end or,
// failing that, its start ("friendly." -> "friendly", ".").
//
// For each order and segment, with the reference that gives the segment the
// best F-score:
//   hyp   hypothesis n-grams (0 if the reference has no n-gram of that order)
//   ref   reference n-grams
//   match hypothesis n-grams found in the reference, clipped to its counts
// summed over the corpus. Per order, P = match/hyp and R = match/ref; with
// beta = 2 recall weighs twice as much as precision:
//   F_beta(P, R) = (1 + beta^2) P R / (beta^2 P + R)
//
// sacreBLEU 2.x's default (eps_smoothing = false, signature "eff:yes"):
// average P and R over the orders where both hyp and ref are non-zero, then
//   chrF = 100 * F_beta(avg P, avg R)        (0 if both averages are 0)
// With eps_smoothing (chrF++.py, NLTK, Moses): a missing P or R is 1e-16, an
// order whose F is undefined counts 1e-16, and
//   chrF = 100 * (1 / orders) * sum over orders of F_beta(P, R)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace eval::metrics {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2: chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;  // whitespace in character n-grams
  bool eps_smoothing = false;
};

// One order's n-grams, summed over the corpus (see above).
struct ChrfOrderStatistics {
  int64_t hyp = 0;    // hypothesis n-grams
  int64_t ref = 0;    // reference n-grams
  int64_t match = 0;  // hypothesis n-grams in the reference, clipped
};

struct ChrfScore {
  double score = 0;  // 0..100
  // Character orders 1..char_order, then word orders 1..word_order: sacreBLEU's
  // CHRF statistics (hyp, ref, match per order), summed over the segments.
  std::vector<ChrfOrderStatistics> statistics;
  std::string name;       // "chrF2", "chrF2++": beta, then one '+' per word order
  std::string signature;  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
};

// sacrebleu.corpus_chrf(hypotheses, references, ...): references[k][i] is the
// k-th reference of hypotheses[i]. Throws std::invalid_argument on invalid
// options, mismatched stream lengths or invalid UTF-8.
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const ChrfOptions& options = {});

std::string chrf_signature(const ChrfOptions& options, size_t num_references);

}  // namespace eval::metrics
