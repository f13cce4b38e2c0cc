// What the decoding algorithms (greedy_decode.h, beam_search.h) ask of a
// model: log-probabilities of the next token for a batch of prefixes, and a
// way to keep only some rows (finished sentences leave, beams are reordered).
//
// TransformerDecoderState runs the encoder once and the decoder on the whole
// prefix at every step (the Annotated Transformer's greedy_decode does the
// same; no key/value cache).
#pragma once
#include <torch/torch.h>

#include "trainer/model/transformer.h"

namespace eval {

class DecoderState {
 public:
  virtual ~DecoderState() = default;
  // prefixes [N, t] int64 (bos first) -> log p(next token) [N, V] float32
  virtual torch::Tensor next_log_probs(const torch::Tensor& prefixes) = 0;
  // Keep rows `rows` [N'] int64 (indices into the current N rows, repeats allowed).
  virtual void select_rows(const torch::Tensor& rows) = 0;
};

class TransformerDecoderState : public DecoderState {
 public:
  // src [B, S] int64 (eos, padding); each row becomes `copies` consecutive
  // decoder rows (beam search: one per beam) -> N = B × copies.
  TransformerDecoderState(model::EncoderDecoder& model, const torch::Tensor& src, int64_t copies = 1);

  torch::Tensor next_log_probs(const torch::Tensor& prefixes) override;
  void select_rows(const torch::Tensor& rows) override;

 private:
  model::EncoderDecoder& model_;
  torch::Tensor src_mask_;  // [N, 1, 1, S]
  torch::Tensor memory_;    // [N, S, d_model]
};

}  // namespace eval
