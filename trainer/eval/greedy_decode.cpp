#include "trainer/eval/greedy_decode.h"

#include "trainer/model/masks.h"

namespace eval {

std::vector<std::vector<int32_t>> greedy_decode(model::EncoderDecoder& model,
                                                const torch::Tensor& src, int64_t bos,
                                                int64_t eos, int64_t max_len) {
  torch::NoGradGuard no_grad;
  const int64_t batch = src.size(0), pad = model->config().pad_id;
  const auto src_mask = model::make_src_mask(src, pad);   // [B, 1, 1, S]
  const auto memory = model->encode(src, src_mask);       // [B, S, D]

  auto ys = torch::full({batch, 1}, bos, torch::kLong);   // [B, t]
  auto finished = torch::zeros({batch}, torch::kBool);    // [B]
  for (int64_t t = 0; t < max_len && !finished.all().item<bool>(); ++t) {
    const auto hidden = model->decode(memory, src_mask, ys, model::make_tgt_mask(ys, pad));
    const auto log_probs = model->generator()(hidden.select(1, -1));  // [B, V]
    auto next = log_probs.argmax(-1);                                 // [B]
    next.masked_fill_(finished, pad);                                 // ended rows emit pad
    finished |= next.eq(eos);
    ys = torch::cat({ys, next.unsqueeze(1)}, 1);
  }

  std::vector<std::vector<int32_t>> out(batch);
  const auto rows = ys.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 1; t < ys.size(1) && rows[b][t] != eos && rows[b][t] != pad; ++t)
      out[b].push_back(static_cast<int32_t>(rows[b][t]));
  return out;
}

}  // namespace eval
