#include "trainer/eval/decode.h"

#include <algorithm>

#include "trainer/eval/beam_search.h"
#include "trainer/eval/greedy_decode.h"
#include "trainer/eval/rows_in_parallel.h"

namespace eval {

namespace {

// One thread's decoding of src's rows.
TokenSequences decode_rows(model::EncoderDecoder& model, const torch::Tensor& src,
                           const data::SpecialIds& special, const DecodeOptions& options) {
  // Each sentence: at most its source length + max_extra_len tokens, never past the positional
  // encoding.
  const auto src_lengths = src.ne(special.pad).sum(1).cpu();  // [B], eos included
  const auto src_length = src_lengths.accessor<int64_t, 1>();
  std::vector<int64_t> max_lens;
  for (int64_t b = 0; b < src.size(0); ++b)
    max_lens.push_back(std::max<int64_t>(
        1, std::min(src_length[b] - 1 + options.max_extra_len, model->config().max_positions - 1)));
  TransformerDecoderState state(model, src);
  if (options.beam == 1) return greedy_decode(state, max_lens, special.bos, special.eos);
  BeamOptions beam;
  beam.beam = options.beam;
  beam.length_penalty = options.length_penalty;
  TokenSequences out;
  for (auto& h : beam_search(state, max_lens, special.bos, special.eos, beam))
    out.push_back(std::move(h.tokens));
  return out;
}

}  // namespace

std::vector<std::vector<int32_t>> decode_batch(model::EncoderDecoder& model,
                                               const torch::Tensor& src,
                                               const data::SpecialIds& special,
                                               const DecodeOptions& options) {
  const auto decode = [&](const torch::Tensor& rows) {
    return decode_rows(model, rows, special, options);
  };
  if (src.is_cpu() && src.size(0) > 1 && torch::get_num_threads() > 1)
    return decode_rows_in_parallel(src, special.pad, torch::get_num_threads(), decode);
  return decode(src);
}

nlohmann::json describe(const DecodeOptions& options) {
  nlohmann::json d = {{"method", options.beam == 1 ? "greedy" : "beam"}};
  if (options.beam > 1) {
    d["beam"] = options.beam;
    d["length_penalty"] = options.length_penalty;
  }
  d["max_len"] = "source length + " + std::to_string(options.max_extra_len);
  return d;
}

}  // namespace eval
