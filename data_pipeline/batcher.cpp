#include "data_pipeline/batcher.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data_pipeline/index_shuffle.h"
#include "data_pipeline/random.h"

namespace data {

namespace {

int64_t row_of(const Lengths& lengths) { return std::max(lengths.src, lengths.tgt) + 1; }
bool within(const Lengths& lengths, int64_t max_len) {
  return std::max(lengths.src, lengths.tgt) <= max_len;
}

// An example of a window and its row size.
struct Sized {
  int64_t row = 0;
  int64_t index = 0;
};

void sort_by_row(std::vector<Sized>& examples) {  // stable: equal rows keep their order
  std::stable_sort(examples.begin(), examples.end(),
                   [](const Sized& a, const Sized& b) { return a.row < b.row; });
}

// The batches of one length-sorted window, in order: filled while rows ×
// longest row <= batch_tokens.
std::vector<GlobalBatch> fill(const std::vector<Sized>& sorted, int64_t batch_tokens) {
  std::vector<GlobalBatch> batches;
  GlobalBatch batch;
  int64_t longest = 0;  // row size of the batch's longest example
  for (const Sized& example : sorted) {
    const auto rows = static_cast<int64_t>(batch.size()) + 1;
    if (!batch.empty() && rows * std::max(longest, example.row) > batch_tokens) {
      batches.push_back(std::move(batch));
      batch.clear();
      longest = 0;
    }
    batch.push_back(example.index);
    longest = std::max(longest, example.row);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  return batches;
}

}  // namespace

Batcher::Batcher(const LengthTable& lengths, const BatcherOptions& options)
    : lengths_(lengths), options_(options) {
  if (options.max_len < 1 || options.max_len >= options.batch_tokens) {
    throw std::invalid_argument(
        "batching needs 1 <= max_len < batch_tokens so that every example "
        "fits in a batch; got max_len " +
        std::to_string(options.max_len) + ", batch_tokens " + std::to_string(options.batch_tokens));
  }
  if (options.sort_window < 1) throw std::invalid_argument("batching needs sort_window >= 1");
  // One sequential pass, a chunk at a time: the kept examples and their rows.
  const int64_t n = lengths.size();
  double kept_rows = 0;
  std::vector<Lengths> chunk;
  for (int64_t begin = 0; begin < n; begin += static_cast<int64_t>(chunk.size())) {
    chunk.resize(static_cast<size_t>(std::min<int64_t>(n - begin, int64_t{1} << 20)));
    lengths.read(begin, chunk);
    for (const Lengths& example : chunk) {
      if (!within(example, options.max_len)) continue;
      ++num_kept_;
      kept_rows += static_cast<double>(row_of(example));
    }
  }
  if (num_kept_ == 0) {  // an epoch without batches would never end a step loop
    throw std::invalid_argument("no example of " + std::to_string(n) + " is within max_len " +
                                std::to_string(options.max_len));
  }
  // Positions per window such that its kept examples hold about
  // sort_window × batch_tokens tokens of rows.
  const double window_tokens = static_cast<double>(options.sort_window) * options.batch_tokens;
  window_size_ = static_cast<int64_t>(std::clamp(
      std::ceil(window_tokens * static_cast<double>(n) / kept_rows), 1.0, static_cast<double>(n)));
}

int64_t Batcher::row_size(int64_t index) const { return row_of(lengths_.at(index)); }

std::vector<GlobalBatch> Batcher::window(int64_t epoch, int64_t window) const {
  if (window < 0 || window >= num_windows())
    throw std::out_of_range("window " + std::to_string(window) + " outside an epoch's " +
                            std::to_string(num_windows()));
  const uint64_t epoch_seed = mix_seed(options_.seed, static_cast<uint64_t>(epoch));
  const IndexShuffle order(static_cast<uint64_t>(lengths_.size()), epoch_seed);
  const int64_t begin = window * window_size_;
  const int64_t end = std::min(begin + window_size_, lengths_.size());
  std::vector<Sized> kept;
  for (int64_t position = begin; position < end; ++position) {
    const auto index = static_cast<int64_t>(order(static_cast<uint64_t>(position)));
    const Lengths example = lengths_.at(index);
    if (within(example, options_.max_len)) kept.push_back({row_of(example), index});
  }
  sort_by_row(kept);
  std::vector<GlobalBatch> batches = fill(kept, options_.batch_tokens);
  Rng(mix_seed(epoch_seed, static_cast<uint64_t>(window))).shuffle(batches);
  return batches;
}

std::vector<GlobalBatch> Batcher::epoch(int64_t epoch) const {
  std::vector<GlobalBatch> batches;
  for (int64_t w = 0; w < num_windows(); ++w)
    for (auto& batch : window(epoch, w)) batches.push_back(std::move(batch));
  return batches;
}

std::vector<GlobalBatch> Batcher::split(const GlobalBatch& batch, int64_t parts) const {
  if (parts < 1)
    throw std::invalid_argument("cannot split a batch into " + std::to_string(parts) + " parts");
  // Positions in the batch, heaviest first.
  std::vector<size_t> heaviest(batch.size());
  std::iota(heaviest.begin(), heaviest.end(), 0);
  std::vector<int64_t> tokens(batch.size());
  for (size_t k = 0; k < batch.size(); ++k) tokens[k] = target_tokens(batch[k]);
  std::stable_sort(heaviest.begin(), heaviest.end(),
                   [&](size_t a, size_t b) { return tokens[a] > tokens[b]; });
  // Greedy longest-processing-time: each into the lightest part so far.
  std::vector<int64_t> load(parts, 0);
  std::vector<std::vector<size_t>> positions(parts);
  for (const size_t position : heaviest) {
    const auto part = std::min_element(load.begin(), load.end()) - load.begin();
    positions[part].push_back(position);
    load[part] += tokens[position];
  }
  std::vector<GlobalBatch> result(parts);
  for (int64_t part = 0; part < parts; ++part) {
    std::sort(positions[part].begin(), positions[part].end());
    for (const size_t position : positions[part]) result[part].push_back(batch[position]);
  }
  return result;
}

std::vector<GlobalBatch> length_sorted_batches(const LengthTable& lengths, int64_t batch_tokens) {
  std::vector<Lengths> all(static_cast<size_t>(lengths.size()));
  lengths.read(0, all);
  std::vector<Sized> sorted(all.size());
  for (size_t i = 0; i < all.size(); ++i) sorted[i] = {row_of(all[i]), static_cast<int64_t>(i)};
  sort_by_row(sorted);
  return fill(sorted, batch_tokens);
}

}  // namespace data
