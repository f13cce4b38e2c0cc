// What the decoding algorithms (greedy_decode.h, beam_search.h) ask of a
// model: log-probabilities of the next token for a batch of prefixes, and a
// way to keep only some rows (finished sentences leave, beams are reordered).
//
// TransformerDecoderState runs the encoder once and the decoder
// incrementally: each call computes only the newest position, attending over
// the keys and values cached for the earlier ones (model/decoder_cache.h).
#pragma once
#include <torch/torch.h>

#include "trainer/model/transformer.h"

namespace eval {

class DecoderState {
 public:
  virtual ~DecoderState() = default;
  // prefixes [N, t] int64 (bos first) -> log p(next token) [N, V] float32.
  // Calls come in order: t = 1, 2, ... (rows kept by select_rows in between).
  virtual torch::Tensor next_log_probs(const torch::Tensor& prefixes) = 0;
  // Keep rows `rows` [N'] int64 (indices into the current N rows, repeats allowed).
  // Prefixes and rows may live on the CPU: the state moves them to its device.
  virtual void select_rows(const torch::Tensor& rows) = 0;
};

class TransformerDecoderState : public DecoderState {
 public:
  // src [B, S] int64 (eos, padding); each row becomes `copies` consecutive
  // decoder rows (beam search: one per beam) -> N = B × copies.
  TransformerDecoderState(model::EncoderDecoder& model, const torch::Tensor& src,
                          int64_t copies = 1);

  torch::Tensor next_log_probs(const torch::Tensor& prefixes) override;
  void select_rows(const torch::Tensor& rows) override;

 private:
  model::EncoderDecoder& model_;
  torch::Tensor src_keep_;         // [N, 1, 1, S] bool: the source positions that are not padding
  model::AttentionMask src_mask_;  // of src_keep_, built once per set of rows for every step
  model::DecoderCache cache_;      // keys and values of the memory and of positions < t
};

}  // namespace eval
