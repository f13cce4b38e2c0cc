// The global batch: which examples are trained on together, and how they are
// split across ranks and accumulation steps (docs/DESIGN.md, "the global batch").
//
// An epoch's global batches depend on (lengths, options, epoch) only, never on
// the world size or the accumulation factor:
//
//   1. drop examples longer than max_len (num_skipped() counts them for the
//      caller to report);
//   2. shuffle the rest with Rng(mix_seed(seed, epoch));
//   3. cut that order into windows of about sort_window × batch_tokens tokens
//      and stable-sort each window by row size (length bucketing);
//   4. fill batches in that order while rows × longest row <= batch_tokens;
//      a batch never spans two windows;
//   5. shuffle the batches with the same generator.
//
// Row size of an example = max(src_len + 1, tgt_len + 1): its longest row after
// collate (src + eos; bos + tgt or tgt + eos), so a batch's padded source and
// target tensors both hold at most batch_tokens entries.
//
// A global batch is then split into parts = world_size × accum_steps
// micro-batches balanced by target tokens (tgt_len + 1, the tokens the loss
// counts). Micro-batch (rank r, accumulation step a) is part
// micro_batch_index(r, a, world_size) = a × world_size + r. A part is empty
// when the batch has fewer examples than parts; the trainer still takes part
// in the gradient sum with zero tokens.
//
// Resuming mid-epoch: recompute epoch(e) and continue at the saved batch index.
#pragma once
#include <cstdint>
#include <vector>

#include "data_pipeline/example.h"

namespace data {

// Indices into the dataset split (0 .. size-1; not Example::id).
using GlobalBatch = std::vector<int64_t>;

struct BatcherOptions {
  int64_t batch_tokens = 25000;  // bound on rows × longest row of a global batch
  int64_t max_len = 256;         // skip examples whose bare src or tgt is longer
  int64_t sort_window = 100;     // sort window, in batches' worth of tokens
  uint64_t seed = 1;
};

class Batcher {
 public:
  // Throws std::invalid_argument unless 1 <= max_len < batch_tokens (every
  // kept example fits in a batch), sort_window >= 1 and some example is kept.
  Batcher(const ExampleLengths& lengths, const BatcherOptions& options);

  // The global batches of `epoch`, in training order.
  std::vector<GlobalBatch> epoch(int64_t epoch) const;

  // `batch` cut into `parts` micro-batches: examples taken heaviest first
  // (target tokens; ties in batch order), each into the currently lightest
  // part (ties: lowest part). Each part keeps the batch's order. Parts differ
  // by at most one example's target tokens.
  std::vector<GlobalBatch> split(const GlobalBatch& batch, int64_t parts) const;

  int64_t row_size(int64_t index) const { return row_size_[index]; }
  int64_t target_tokens(int64_t index) const { return target_tokens_[index]; }
  int64_t num_examples() const { return static_cast<int64_t>(kept_.size()); }
  int64_t num_skipped() const { return static_cast<int64_t>(row_size_.size() - kept_.size()); }

 private:
  // Appends the batches of one sorted window.
  void fill(GlobalBatch::const_iterator begin, GlobalBatch::const_iterator end,
            std::vector<GlobalBatch>& batches) const;

  BatcherOptions options_;
  std::vector<int64_t> row_size_;       // [n] max(src_len, tgt_len) + 1
  std::vector<int64_t> target_tokens_;  // [n] tgt_len + 1
  std::vector<int64_t> kept_;           // indices not longer than max_len, ascending
};

// The part of split(batch, world_size × accum_steps) that `rank` trains on at
// accumulation step `accum_step`.
inline int64_t micro_batch_index(int64_t rank, int64_t accum_step, int64_t world_size) {
  return accum_step * world_size + rank;
}

// For evaluation (no training order to keep): all examples sorted by row
// size, cut into consecutive batches of at most batch_tokens (rows × longest
// row; a longer example gets a batch of its own), so batches pad little.
std::vector<GlobalBatch> length_sorted_batches(const ExampleLengths& lengths, int64_t batch_tokens);

}  // namespace data
