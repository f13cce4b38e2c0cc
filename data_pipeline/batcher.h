// The global batch: which examples are trained on together, and how they are
// split across ranks and accumulation steps (docs/DESIGN.md, "the global batch").
//
// An epoch's global batches depend on (lengths, options, epoch) only, never on
// the world size or the accumulation factor:
//
//   1. shuffle the split: position k of the epoch's order holds example
//      IndexShuffle(n, mix_seed(seed, epoch))(k) (index_shuffle.h);
//   2. cut the order into windows of window_size() consecutive positions —
//      about sort_window × batch_tokens tokens of kept examples (the last
//      window shorter);
//   3. in each window, drop examples longer than max_len (num_skipped()
//      counts them for the caller to report) and stable-sort the rest by row
//      size (length bucketing);
//   4. fill batches in that order while rows × longest row <= batch_tokens;
//   5. shuffle the window's batches with Rng(mix_seed(mix_seed(seed, epoch),
//      window)).
//
// The epoch is its windows in order. Nothing is held per example: a window's
// batches are computed when asked for, reading its examples' lengths from
// the LengthTable (the split index on disk), so memory is one window's
// examples whatever the corpus — Marian's maxi-batches do the same (sort a
// maxi-batch by length, shuffle its mini-batches).
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
// Resuming mid-epoch: recompute the window and continue at the saved batch.
#pragma once
#include <cstdint>
#include <vector>

#include "data_pipeline/length_table.h"

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
  // Reads every example's lengths once, in order (the kept count, the window
  // size). Throws std::invalid_argument unless 1 <= max_len < batch_tokens
  // (every kept example fits in a batch), sort_window >= 1 and some example
  // is kept. `lengths` must outlive the batcher.
  Batcher(const LengthTable& lengths, const BatcherOptions& options);
  Batcher(const LengthTable&& lengths, const BatcherOptions& options) = delete;  // would dangle

  int64_t num_windows() const { return (lengths_.size() + window_size_ - 1) / window_size_; }
  int64_t window_size() const { return window_size_; }  // positions of the order per window
  // The global batches of window `window` of `epoch`, in training order.
  std::vector<GlobalBatch> window(int64_t epoch, int64_t window) const;
  // The whole epoch, its windows in order, in memory (for small splits and tests).
  std::vector<GlobalBatch> epoch(int64_t epoch) const;

  // `batch` cut into `parts` micro-batches: examples taken heaviest first
  // (target tokens; ties in batch order), each into the currently lightest
  // part (ties: lowest part). Each part keeps the batch's order. Parts differ
  // by at most one example's target tokens.
  std::vector<GlobalBatch> split(const GlobalBatch& batch, int64_t parts) const;

  int64_t row_size(int64_t index) const;
  int64_t target_tokens(int64_t index) const { return lengths_.at(index).tgt + 1; }
  int64_t num_examples() const { return num_kept_; }
  int64_t num_skipped() const { return lengths_.size() - num_kept_; }

 private:
  const LengthTable& lengths_;
  BatcherOptions options_;
  int64_t num_kept_ = 0;  // examples not longer than max_len
  int64_t window_size_ = 1;
};

// The part of split(batch, world_size × accum_steps) that `rank` trains on at
// accumulation step `accum_step`.
inline int64_t micro_batch_index(int64_t rank, int64_t accum_step, int64_t world_size) {
  return accum_step * world_size + rank;
}

// For evaluation (no training order to keep; the split's lengths in
// memory): all examples sorted by row size, cut into consecutive batches of at most batch_tokens
// (rows × longest row; a longer example gets a batch of its own), so batches pad little.
std::vector<GlobalBatch> length_sorted_batches(const LengthTable& lengths, int64_t batch_tokens);

}  // namespace data
