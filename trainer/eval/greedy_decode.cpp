#include "trainer/eval/greedy_decode.h"

#include "trainer/eval/top_k.h"

#include <stdexcept>

namespace eval {

std::vector<std::vector<int32_t>> greedy_decode(DecoderState& state,
                                                const std::vector<int64_t>& max_lens, int64_t bos,
                                                int64_t eos) {
  for (int64_t limit : max_lens)
    if (limit < 1) throw std::invalid_argument("greedy decoding needs length limits >= 1");
  torch::NoGradGuard no_grad;
  const int64_t batch = static_cast<int64_t>(max_lens.size());
  std::vector<std::vector<int32_t>> out(batch);
  std::vector<int64_t> active(batch);  // output index of each live row
  for (int64_t b = 0; b < batch; ++b) active[b] = b;

  auto prefixes = torch::full({batch, 1}, bos, torch::kLong);  // [N, t]
  for (int64_t t = 0; !active.empty(); ++t) {
    // The most likely token, the first of equal ones: the largest logit (the
    // log-softmax would subtract one constant per row), by top_k's scan.
    auto next = std::get<1>(top_k(state.next_logits(prefixes), 1)).view({-1}).cpu();  // [N]
    const auto token = next.accessor<int64_t, 1>();
    std::vector<int64_t> keep, still_active;
    for (int64_t i = 0; i < token.size(0); ++i) {
      if (token[i] == eos) continue;
      out[active[i]].push_back(static_cast<int32_t>(token[i]));
      if (t + 1 == max_lens[active[i]]) continue;  // at its limit
      keep.push_back(i);
      still_active.push_back(active[i]);
    }
    if (keep.size() != active.size()) {  // some rows ended: drop them
      const auto rows = torch::tensor(keep, torch::kLong);
      state.select(rows, rows);  // one row a source
      prefixes = prefixes.index_select(0, rows.to(prefixes.device()));
      next = next.index_select(0, rows);
      active = std::move(still_active);
    }
    prefixes = torch::cat({prefixes, next.to(prefixes.device()).unsqueeze(1)}, 1);
  }
  return out;
}

}  // namespace eval
