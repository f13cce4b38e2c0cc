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

// Whether threads decode shares of the batch (rows_in_parallel.h) rather
// than each running part of every operation. A share reads every weight
// matrix at each step. Up to 1 M parameters the weights stay in a core's
// caches and a step is many small operations: shares. A larger model's
// weights come from memory, once per share and step; a share's GEMMs over
// its M rows (sentences times beams) do 2M FLOPs per float read. From 32
// rows a share (64 FLOPs a float: about what a core's part of a loaded
// node's memory bandwidth feeds a core's float32 GEMM, an estimate) shares;
// fewer (many cores, a small batch) each operation runs over all threads,
// its GEMMs reading each weight once for all rows. The figures behind both
// thresholds: docs/performance.md, "Why the code is as it is".
constexpr int64_t kCacheResidentParameters = int64_t{1} << 20;
constexpr int64_t kRowsPerShare = 32;

bool in_shares(model::EncoderDecoder& model, const torch::Tensor& src, int64_t beam) {
  const int threads = torch::get_num_threads();
  if (!src.is_cpu() || src.size(0) < 2 || threads < 2) return false;
  int64_t parameters = 0;
  for (const auto& p : model->parameters()) parameters += p.numel();
  return parameters <= kCacheResidentParameters || src.size(0) * beam / threads >= kRowsPerShare;
}

}  // namespace

std::vector<std::vector<int32_t>> decode_batch(model::EncoderDecoder& model,
                                               const torch::Tensor& src,
                                               const data::SpecialIds& special,
                                               const DecodeOptions& options) {
  const auto decode = [&](const torch::Tensor& rows) {
    return decode_rows(model, rows, special, options);
  };
  if (in_shares(model, src, options.beam))
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
