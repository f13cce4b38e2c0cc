// Beam search (batched) with the length penalty of GNMT (Wu et al. 2016, §7):
//
//   score(Y) = log p(Y | X) / lp(Y),   lp(Y) = ((5 + |Y|) / 6)^α
//
// |Y| counts the generated tokens, eos included. Each step extends every live
// hypothesis of a sentence by every token and keeps the K best extensions
// that do not end in eos; one that ends in eos and is among the K best
// extensions of the step is set aside as finished. A sentence is done once it
// has K finished hypotheses (or at its length limit, when its live ones
// count as finished); its rows then leave the batch, and decoding ends when
// every sentence is done. The answer is the finished hypothesis with the best
// score. K = 1 is greedy decoding.
#pragma once
#include <cstdint>
#include <vector>

#include "trainer/eval/decoder_state.h"

namespace eval {

struct BeamOptions {
  int64_t beam = 4;             // K
  double length_penalty = 0.6;  // α (the paper: beam 4, α = 0.6); 0 = raw log-probability
};

struct Hypothesis {
  std::vector<int32_t> tokens;  // without bos/eos
  double log_prob = 0;          // log p(Y | X), eos included when it ended
  double score = 0;             // log_prob / lp(Y)
};

// lp(Y) for |Y| = length.
double gnmt_length_penalty(int64_t length, double alpha);

// `state` holds one row per entry of max_lens (a sentence's source; max_lens:
// tokens generated at most, eos included) -> the best hypothesis of each
// sentence, in sentence order.
std::vector<Hypothesis> beam_search(DecoderState& state, const std::vector<int64_t>& max_lens,
                                    int64_t bos, int64_t eos, const BeamOptions& options);

}  // namespace eval
