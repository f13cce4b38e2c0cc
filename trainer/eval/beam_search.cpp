#include "trainer/eval/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace eval {

namespace {

// The finished hypotheses of one sentence.
struct Finished {
  std::vector<Hypothesis> hypotheses;
  void add(const torch::TensorAccessor<int64_t, 1>& prefix, int64_t next, bool ended,
           double log_prob, double alpha) {
    Hypothesis h;
    for (int64_t t = 1; t < prefix.size(0); ++t)
      h.tokens.push_back(static_cast<int32_t>(prefix[t]));
    if (!ended) h.tokens.push_back(static_cast<int32_t>(next));
    h.log_prob = log_prob;
    h.score = log_prob / gnmt_length_penalty(prefix.size(0), alpha);  // |Y| = t + 1 = prefix length
    hypotheses.push_back(std::move(h));
  }
  Hypothesis best() const {
    // Never empty: each step finishes or keeps its best candidate, and the
    // last step finishes what it keeps.
    if (hypotheses.empty()) throw std::logic_error("beam search: a sentence with no hypothesis");
    return *std::max_element(
        hypotheses.begin(), hypotheses.end(),
        [](const Hypothesis& a, const Hypothesis& b) { return a.score < b.score; });
  }
};

}  // namespace

double gnmt_length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<Hypothesis> beam_search(DecoderState& state, const std::vector<int64_t>& max_lens,
                                    int64_t bos, int64_t eos, const BeamOptions& options) {
  if (options.beam < 1) throw std::invalid_argument("beam search needs beam >= 1");
  for (int64_t limit : max_lens)
    if (limit < 1) throw std::invalid_argument("beam search needs length limits >= 1");
  torch::NoGradGuard no_grad;
  const int64_t batch = static_cast<int64_t>(max_lens.size());
  const int64_t K = options.beam;
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  std::vector<Finished> finished(batch);
  std::vector<int64_t> active(batch);  // sentence of each live group of K rows
  for (int64_t b = 0; b < batch; ++b) active[b] = b;

  auto prefixes = torch::full({batch * K, 1}, bos, torch::kLong);  // [n × K, t]
  // Log-probabilities of the live hypotheses [n, K]; at first the K rows of a
  // sentence are the same prefix, so only beam 0 may be extended.
  auto scores = torch::full({batch, K}, kNone, torch::kFloat);
  scores.select(1, 0).fill_(0);

  for (int64_t t = 0; !active.empty(); ++t) {
    const int64_t n = static_cast<int64_t>(active.size());
    const auto log_probs = state.next_log_probs(prefixes).cpu();  // [n × K, V]
    const int64_t V = log_probs.size(1);
    // Every extension of every live hypothesis: [n, K × V]; the best 2K hold
    // at least K that do not end (a hypothesis has one eos extension). Of
    // those that end in eos, only the ones among the K best are finished; a
    // less likely one is dropped, not counted toward the sentence's K: the
    // rule of fairseq's and transformers' beam search, so that evaluate's
    // answers are those of the model exported to transformers.
    const auto candidates = (scores.unsqueeze(2) + log_probs.view({n, K, V})).view({n, K * V});
    const auto [top_scores, top_index] = candidates.topk(std::min(2 * K, K * V), 1);
    const auto top_score = top_scores.accessor<float, 2>();
    const auto top = top_index.accessor<int64_t, 2>();
    const auto prefix = prefixes.cpu();
    const auto rows_of = prefix.accessor<int64_t, 2>();

    std::vector<int64_t> next_rows, next_tokens, next_active;
    std::vector<float> next_scores;
    for (int64_t i = 0; i < n; ++i) {
      Finished& done = finished[active[i]];
      const bool last_step = t + 1 == max_lens[active[i]];
      std::vector<int64_t> rows, tokens;
      std::vector<float> kept;
      for (int64_t j = 0; j < top.size(1) && static_cast<int64_t>(rows.size()) < K; ++j) {
        const int64_t row = i * K + top[i][j] / V, token = top[i][j] % V;
        const double score = top_score[i][j];
        if (token == eos) {
          if (j < K && score != kNone)
            done.add(rows_of[row], token, /*ended=*/true, score, options.length_penalty);
          continue;
        }
        if (last_step && score != kNone)
          done.add(rows_of[row], token, /*ended=*/false, score, options.length_penalty);
        rows.push_back(row);
        tokens.push_back(token);
        kept.push_back(static_cast<float>(score));
      }
      if (last_step || static_cast<int64_t>(done.hypotheses.size()) >= K)
        continue;  // sentence done
      next_active.push_back(active[i]);
      next_rows.insert(next_rows.end(), rows.begin(), rows.end());
      next_tokens.insert(next_tokens.end(), tokens.begin(), tokens.end());
      next_scores.insert(next_scores.end(), kept.begin(), kept.end());
    }
    active = std::move(next_active);
    if (active.empty()) break;
    const auto device = prefixes.device();
    const auto rows = torch::tensor(next_rows, torch::kLong).to(device);
    state.select_rows(rows);
    prefixes = torch::cat({prefixes.index_select(0, rows),
                           torch::tensor(next_tokens, torch::kLong).to(device).unsqueeze(1)},
                          1);
    scores =
        torch::tensor(next_scores, torch::kFloat).view({static_cast<int64_t>(active.size()), K});
  }

  std::vector<Hypothesis> best;
  for (const Finished& f : finished) best.push_back(f.best());
  return best;
}

}  // namespace eval
