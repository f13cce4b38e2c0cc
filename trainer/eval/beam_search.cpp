#include "trainer/eval/beam_search.h"

#include "trainer/eval/top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace eval {

namespace {

constexpr float kEmpty = -std::numeric_limits<float>::infinity();  // log p of an empty slot

// The live hypotheses: k rows for each sentence still decoding, rows
// i × k … i × k + k − 1 for sentences[i] (k = 1 at the first step, then K).
struct Beams {
  std::vector<int64_t> sentences;  // [n]
  torch::Tensor prefixes;          // [n × k, t] int64, on the CPU: bos, then the tokens so far
  torch::Tensor log_probs;         // [n, k] float32: log p(prefix | X); kEmpty for an empty slot
};

// A live hypothesis extended by one token.
struct Extension {
  int64_t row;     // the hypothesis: a row of Beams::prefixes
  int64_t token;   // the token appended
  float log_prob;  // log p(prefix, token | X)
};

// What step 4 makes of a sentence's candidates.
struct Choice {
  std::vector<Extension> kept;   // its next beam: K extensions that do not end in eos
  std::vector<Extension> ended;  // the hypotheses that end here, best first
};

// 1. The first beams: one hypothesis per sentence, bos (log p = 0), in the
// decoder state's one row per source. Step 4 makes K of each.
Beams first_beams(int64_t batch, int64_t bos) {
  Beams beams;
  beams.sentences.resize(batch);
  std::iota(beams.sentences.begin(), beams.sentences.end(), 0);
  beams.prefixes = torch::full({batch, 1}, bos, torch::kLong);
  beams.log_probs = torch::zeros({batch, 1}, torch::kFloat);
  return beams;
}

// 2. One decoder step, and 3. the candidates: each sentence's 2K most likely
// extensions, best first (the length penalty applies to finished hypotheses
// only, in step 5). A beam's extensions all add its own log p, so the
// sentence's best 2K are among each beam's best 2K tokens: each row of the
// decoder's logits [n × k, V] is cut to its best 2K first, and only [n, k × 2K] are
// scored and ranked (as CTranslate2 does), not [n, k × V].
std::vector<std::vector<Extension>> candidates(DecoderState& state, const Beams& beams, int64_t K) {
  const int64_t n = beams.log_probs.size(0), k = beams.log_probs.size(1);
  const auto logits = state.next_logits(beams.prefixes);  // [n × k, V], on the state's device
  const int64_t best = std::min(2 * K, logits.size(1));
  const auto [row_log_probs, row_tokens] = top_k_log_probs(logits, best);  // [n × k, best]
  const auto scored =  // log p(prefix, token | X), column b × best + j: beam b, its j-th token
      (beams.log_probs.unsqueeze(2) + row_log_probs.cpu().view({n, k, best})).view({n, k * best});
  const auto [top_log_probs, top_columns] = top_k(scored, std::min(2 * K, k * best));  // [n, 2K]
  const auto top_log_prob = top_log_probs.accessor<float, 2>();
  const auto column = top_columns.accessor<int64_t, 2>();
  const auto tokens = row_tokens.cpu();
  const auto token = tokens.accessor<int64_t, 2>();
  std::vector<std::vector<Extension>> ranked(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < column.size(1); ++j) {
      const int64_t row = i * k + column[i][j] / best;
      ranked[i].push_back({row, token[row][column[i][j] % best], top_log_prob[i][j]});
    }
  return ranked;
}

// 4. A sentence's next beam: the first K of its candidates that do not end in
// eos. An eos extension among the K best ends its hypothesis; a less likely
// one is dropped, not counted toward the sentence's K: the rule of fairseq's
// and transformers' beam search, so that evaluate's answers are those of the
// model exported to transformers. At the length limit every kept hypothesis
// ends too. An extension of probability 0 (log p = kEmpty) is an empty slot:
// it never ends, and fills the beam where fewer than K extensions do not end
// (a vocabulary of K tokens or fewer, at the first step).
Choice choose(const std::vector<Extension>& candidates, int64_t K, int64_t eos, bool at_limit) {
  Choice choice;
  for (size_t j = 0; j < candidates.size() && static_cast<int64_t>(choice.kept.size()) < K; ++j) {
    const Extension& e = candidates[j];
    const bool live = e.log_prob != kEmpty;
    if (e.token == eos) {
      if (static_cast<int64_t>(j) < K && live) choice.ended.push_back(e);
      continue;
    }
    if (at_limit && live) choice.ended.push_back(e);
    choice.kept.push_back(e);
  }
  while (static_cast<int64_t>(choice.kept.size()) < K)
    choice.kept.push_back({candidates.front().row, eos, kEmpty});
  return choice;
}

// 4 (continued). The kept extensions, K for each of `sentences` (those of
// beams.sentences at `sources`), become the live hypotheses: the decoder state
// keeps their sources and rows (reordering its cache) and the prefixes grow by
// their tokens.
Beams advance(DecoderState& state, const Beams& beams, std::vector<int64_t> sentences,
              const std::vector<int64_t>& sources, const std::vector<Extension>& kept, int64_t K) {
  const int64_t m = static_cast<int64_t>(kept.size());  // m = n' × K
  auto rows = torch::empty({m}, torch::kLong);
  auto tokens = torch::empty({m, 1}, torch::kLong);
  auto log_probs = torch::empty({m}, torch::kFloat);
  auto row = rows.accessor<int64_t, 1>();
  auto token = tokens.accessor<int64_t, 2>();
  auto log_prob = log_probs.accessor<float, 1>();
  for (int64_t r = 0; r < m; ++r) {
    row[r] = kept[r].row;
    token[r][0] = kept[r].token;
    log_prob[r] = kept[r].log_prob;
  }
  state.select(torch::tensor(sources, torch::kLong), rows);
  Beams next;
  next.prefixes = torch::cat({beams.prefixes.index_select(0, rows), tokens}, 1);  // [n' × K, t + 1]
  next.log_probs = log_probs.view({static_cast<int64_t>(sentences.size()), K});   // [n', K]
  next.sentences = std::move(sentences);
  return next;
}

// 5. The finished hypothesis that `e` ends: `prefix` [t + 1] (bos first) and
// e's token, unless it is eos; scored log p / lp(Y), |Y| = t + 1.
Hypothesis finish(const torch::TensorAccessor<int64_t, 1>& prefix, const Extension& e, int64_t eos,
                  double alpha) {
  Hypothesis h;
  for (int64_t t = 1; t < prefix.size(0); ++t) h.tokens.push_back(static_cast<int32_t>(prefix[t]));
  if (e.token != eos) h.tokens.push_back(static_cast<int32_t>(e.token));
  h.log_prob = e.log_prob;
  h.score = h.log_prob / gnmt_length_penalty(prefix.size(0), alpha);
  return h;
}

// 7. The finished hypothesis of best score (the first found, of equal ones).
// Never none: each step finishes or keeps a sentence's best candidate, and
// the last step finishes what it keeps.
Hypothesis best_of(const std::vector<Hypothesis>& finished) {
  if (finished.empty()) throw std::logic_error("beam search: a sentence with no hypothesis");
  return *std::max_element(
      finished.begin(), finished.end(),
      [](const Hypothesis& a, const Hypothesis& b) { return a.score < b.score; });
}

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
  const int64_t K = options.beam;
  std::vector<std::vector<Hypothesis>> finished(max_lens.size());  // of each sentence

  Beams beams = first_beams(static_cast<int64_t>(max_lens.size()), bos);  // 1.
  for (int64_t t = 0; !beams.sentences.empty(); ++t) {
    const auto ranked = candidates(state, beams, K);  // 2. and 3.
    const auto prefixes = beams.prefixes.accessor<int64_t, 2>();
    std::vector<int64_t> live, sources;  // the sentences that go on, their indices in beams
    std::vector<Extension> kept;
    for (size_t i = 0; i < ranked.size(); ++i) {
      const int64_t sentence = beams.sentences[i];
      const bool at_limit = t + 1 == max_lens[sentence];
      const Choice choice = choose(ranked[i], K, eos, at_limit);  // 4.
      for (const Extension& e : choice.ended)                     // 5.
        finished[sentence].push_back(finish(prefixes[e.row], e, eos, options.length_penalty));
      // 6. A sentence is done at its length limit or with K finished hypotheses.
      if (at_limit || static_cast<int64_t>(finished[sentence].size()) >= K) continue;
      live.push_back(sentence);
      sources.push_back(static_cast<int64_t>(i));
      kept.insert(kept.end(), choice.kept.begin(), choice.kept.end());
    }
    if (live.empty()) break;
    beams = advance(state, beams, std::move(live), sources, kept, K);  // 4. (continued)
  }

  std::vector<Hypothesis> answers;  // 7.
  for (const auto& hypotheses : finished) answers.push_back(best_of(hypotheses));
  return answers;
}

}  // namespace eval
