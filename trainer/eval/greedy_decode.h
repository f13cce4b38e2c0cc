// Greedy decoding (batched): at each step append argmax_y p(y | src, y_<t).
// A row leaves the batch when it emits eos or reaches its own length limit;
// decoding stops when no row is left.
#pragma once
#include <cstdint>
#include <vector>

#include "trainer/eval/decoder_state.h"

namespace eval {

// `state` holds one row per entry of max_lens (tokens generated at most,
// eos included) -> token sequences without bos/eos, in row order.
std::vector<std::vector<int32_t>> greedy_decode(DecoderState& state,
                                                const std::vector<int64_t>& max_lens, int64_t bos,
                                                int64_t eos);

}  // namespace eval
