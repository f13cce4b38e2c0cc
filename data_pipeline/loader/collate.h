// Examples -> padded tensors for one forward pass (teacher forcing).
//
// For examples with bare src = [a b c], tgt = [x y]:
//
//   src     = a b c </s>          [B, S]  S = longest src + 1
//   tgt_in  = <s> x y             [B, T]  T = longest tgt + 1
//   tgt_out = x y </s>            [B, T]  (tgt_in shifted left by one)
//
// Shorter rows are right-padded with pad; all tensors are int64 on the CPU.
// Classification examples (label >= 0, tgt empty) also give
//
//   labels  = class ids           [B]     (undefined for seq2seq examples)
//
// and their tgt_in / tgt_out are <s> / </s> alone. An empty list gives B = 0
// tensors of shape [0, 0], labels of shape [0] and zero counts, so an empty
// micro-batch flows through without special cases here.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "data_pipeline/example.h"
#include "data_pipeline/special_ids.h"

namespace data {

struct Batch {
  torch::Tensor src;           // [B, S] int64
  torch::Tensor tgt_in;        // [B, T] int64
  torch::Tensor tgt_out;       // [B, T] int64
  torch::Tensor labels;        // [B] int64 class ids (classification); undefined for seq2seq
  int64_t num_src_tokens = 0;  // non-pad entries of src (eos included)
  int64_t num_tgt_tokens = 0;  // non-pad entries of tgt_out: the tokens the loss counts
  std::vector<int64_t> ids;    // [B] Example::id of each row

  // The tensors on `device`, copied asynchronously where the device allows
  // it (a CUDA stream, from pinned memory): the host queues the copy and goes on.
  Batch to(const torch::Device& device) const;
  // The tensors in page-locked host memory, the source of asynchronous copies
  // to a CUDA device (needs a CUDA device to exist).
  Batch pinned() const;

 private:
  template <typename F>
  Batch with_tensors(F f) const;  // a copy with f applied to every tensor
};

// Throws std::invalid_argument when some examples have labels and others not.
Batch collate(const std::vector<Example>& examples, const SpecialIds& special);

}  // namespace data
