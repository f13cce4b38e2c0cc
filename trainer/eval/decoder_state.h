// What the decoding algorithms (greedy_decode.h, beam_search.h) ask of a
// model: the logits of the next token for a batch of prefixes, and a
// way to keep only some of them (finished sentences leave, beams are reordered).
//
// The rows of a batch belong to its sources: each source's rows are
// consecutive, as many for each (greedy: one; beam search: one at the first
// step, then one per beam).
//
// TransformerDecoderState runs the encoder once and the decoder
// incrementally: each call computes only the newest position, attending over
// the keys and values cached for the earlier ones (model/decoder_cache.h).
// What depends on the source alone (its mask, the encoder-decoder
// attention's keys and values) is kept once per source, not once per row.
#pragma once
#include <torch/torch.h>

#include "trainer/model/transformer.h"

namespace eval {

class DecoderState {
 public:
  virtual ~DecoderState() = default;
  // prefixes [N, t] int64 (bos first) -> the next token's logits [N, V]:
  // log p(next token) up to a constant per row (greedy needs no more).
  // Calls come in order: t = 1, 2, ... (rows kept by select in between).
  virtual torch::Tensor next_logits(const torch::Tensor& prefixes) = 0;
  // Keep sources `sources` [n'] int64 (ascending indices into the current n)
  // and rows `rows` [N'] int64 (indices into the current N rows, repeats
  // allowed): N' / n' consecutive rows for each kept source, each taken from
  // that source's rows. Both may live on the CPU: the state moves them to its device.
  virtual void select(const torch::Tensor& sources, const torch::Tensor& rows) = 0;
};

class TransformerDecoderState : public DecoderState {
 public:
  // src [B, S] int64 (eos, padding): B sources, one row each to start with.
  TransformerDecoderState(model::EncoderDecoder& model, const torch::Tensor& src);

  torch::Tensor next_logits(const torch::Tensor& prefixes) override;
  void select(const torch::Tensor& sources, const torch::Tensor& rows) override;

 private:
  model::EncoderDecoder& model_;
  torch::Tensor src_keep_;         // [n, 1, 1, S] bool: the source positions that are not padding
  model::AttentionMask src_mask_;  // of src_keep_, built once per set of sources for every step
  model::DecoderCache cache_;      // keys and values of the memory and of positions < t
};

}  // namespace eval
