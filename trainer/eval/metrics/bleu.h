// BLEU (Papineni et al., 2002) as sacreBLEU 2.x computes it
// (sacrebleu/metrics/bleu.py; sacrebleu.corpus_bleu and sentence_bleu).
//
// Each segment is lowercased (optionally), right-stripped, tokenized
// (bleu_tokenizers.h) and split on whitespace. Over the corpus we sum
//   sys_len, ref_len      hypothesis tokens; the reference length closest to
//                         the hypothesis's (the shorter on ties)
//   totals[n-1]           hypothesis n-grams, n = 1..max order
//   counts[n-1]           of those, the ones in a reference, each n-gram at
//                         most as often as one reference has it
// and then
//   p_n  = 100 * counts / totals                      (percent; smoothed below)
//   BP   = 1 if sys_len >= ref_len, else exp(1 - ref_len / sys_len) (0 if sys_len = 0)
//   BLEU = BP * exp( (1/N) * sum_{n<=N} log p_n )     (0..100)
// with log 0 taken as -9999999999 (so a zero precision gives BLEU 0) and
// BLEU = 0 when no n-gram matches at all.
//
// Smoothing of the precisions (Chen & Cherry 2014, named as in sacreBLEU):
//   exp    (default, mteval-v13a's): the k-th zero count becomes p_n = 100 / (2^k * totals)
//   floor  a zero count becomes p_n = 100 * value / totals (value 0.1 by default)
//   add-k  for n > 1, counts and totals both get + value (1 by default)
//   none   a zero count stays 0
// An order with no hypothesis n-gram (totals = 0) ends the sum there. With
// effective order (sentence_bleu's default) N is the last order with
// hypothesis n-grams instead of the maximum order, so short segments can
// still score.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eval::metrics {

struct BleuOptions {
  std::string tokenize = "13a";        // 13a | zh | char | none
  std::string smooth_method = "exp";   // exp | floor | add-k | none
  std::optional<double> smooth_value;  // floor and add-k; unset: 0.1 and 1
  bool lowercase = false;
  int max_ngram_order = 4;
  bool effective_order = false;
};

// sacrebleu.sentence_bleu's defaults: the corpus ones with effective order.
BleuOptions sentence_bleu_defaults();

// The sufficient statistics, summed over a corpus.
struct BleuStatistics {
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::vector<int64_t> counts;  // matched n-grams, per order
  std::vector<int64_t> totals;  // hypothesis n-grams, per order
};

struct BleuScore {
  double score = 0;                // 0..100
  std::vector<double> precisions;  // percent, per order, as smoothed
  std::vector<int64_t> counts;     // as in the statistics (sacreBLEU's add-k
  std::vector<int64_t> totals;     //   reports them with the k added)
  double bp = 0;                   // brevity penalty
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  // e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"; set by
  // corpus_bleu and sentence_bleu (compute_bleu knows no reference count).
  std::string signature;
};

// BLEU.compute_bleu: the score of already summed statistics. Uses the
// smoothing, effective order and maximum order of `options`.
BleuScore compute_bleu(const BleuStatistics& statistics, const BleuOptions& options);

// sacrebleu.corpus_bleu(hypotheses, references, ...): references[k][i] is the
// k-th reference of hypotheses[i]. Throws std::invalid_argument on unknown
// options, mismatched stream lengths or invalid UTF-8.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references,
                      const BleuOptions& options = {});

// sacrebleu.sentence_bleu(hypothesis, references, ...): one segment, any
// number of references.
BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options = sentence_bleu_defaults());

// "nrefs:<n>|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"; floor and
// add-k show their value: "smooth:floor[0.10]".
std::string bleu_signature(const BleuOptions& options, size_t num_references);

}  // namespace eval::metrics
