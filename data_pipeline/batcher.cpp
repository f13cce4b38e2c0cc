#include "data_pipeline/batcher.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data_pipeline/random.h"

namespace data {

Batcher::Batcher(const ExampleLengths& lengths, const BatcherOptions& options) : options_(options) {
  if (options.max_len < 1 || options.max_len >= options.batch_tokens) {
    throw std::invalid_argument(
        "batching needs 1 <= max_len < batch_tokens so that every example "
        "fits in a batch; got max_len " +
        std::to_string(options.max_len) + ", batch_tokens " + std::to_string(options.batch_tokens));
  }
  if (options.sort_window < 1) throw std::invalid_argument("batching needs sort_window >= 1");
  if (lengths.src.size() != lengths.tgt.size()) {
    throw std::invalid_argument("source and target length lists differ in size");
  }
  for (size_t i = 0; i < lengths.src.size(); ++i) {
    row_size_.push_back(std::max(lengths.src[i], lengths.tgt[i]) + 1);
    target_tokens_.push_back(lengths.tgt[i] + 1);
    if (std::max(lengths.src[i], lengths.tgt[i]) <= options.max_len) {
      kept_.push_back(static_cast<int64_t>(i));
    }
  }
  if (kept_.empty()) {  // an epoch without batches would never end a step loop
    throw std::invalid_argument("no example of " + std::to_string(row_size_.size()) +
                                " is within max_len " + std::to_string(options.max_len));
  }
}

std::vector<GlobalBatch> Batcher::epoch(int64_t epoch) const {
  Rng rng(mix_seed(options_.seed, static_cast<uint64_t>(epoch)));
  GlobalBatch order = kept_;
  rng.shuffle(order);

  std::vector<GlobalBatch> batches;
  const int64_t window_tokens = options_.sort_window * options_.batch_tokens;
  for (auto begin = order.begin(); begin != order.end();) {
    auto end = begin;
    for (int64_t tokens = 0; end != order.end() && tokens < window_tokens; ++end) {
      tokens += row_size_[*end];
    }
    std::stable_sort(begin, end, [&](int64_t a, int64_t b) { return row_size_[a] < row_size_[b]; });
    fill(begin, end, batches);
    begin = end;
  }
  rng.shuffle(batches);
  return batches;
}

void Batcher::fill(GlobalBatch::const_iterator begin, GlobalBatch::const_iterator end,
                   std::vector<GlobalBatch>& batches) const {
  GlobalBatch batch;
  int64_t longest = 0;  // row size of the batch's longest example
  for (auto it = begin; it != end; ++it) {
    const int64_t size = row_size_[*it];
    const auto rows = static_cast<int64_t>(batch.size()) + 1;
    if (!batch.empty() && rows * std::max(longest, size) > options_.batch_tokens) {
      batches.push_back(std::move(batch));
      batch.clear();
      longest = 0;
    }
    batch.push_back(*it);
    longest = std::max(longest, size);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
}

std::vector<GlobalBatch> Batcher::split(const GlobalBatch& batch, int64_t parts) const {
  if (parts < 1)
    throw std::invalid_argument("cannot split a batch into " + std::to_string(parts) + " parts");
  // Positions in the batch, heaviest first.
  std::vector<size_t> heaviest(batch.size());
  std::iota(heaviest.begin(), heaviest.end(), 0);
  std::stable_sort(heaviest.begin(), heaviest.end(), [&](size_t a, size_t b) {
    return target_tokens_[batch[a]] > target_tokens_[batch[b]];
  });
  // Greedy longest-processing-time: each into the lightest part so far.
  std::vector<int64_t> load(parts, 0);
  std::vector<std::vector<size_t>> positions(parts);
  for (const size_t position : heaviest) {
    const auto part = std::min_element(load.begin(), load.end()) - load.begin();
    positions[part].push_back(position);
    load[part] += target_tokens_[batch[position]];
  }
  std::vector<GlobalBatch> result(parts);
  for (int64_t part = 0; part < parts; ++part) {
    std::sort(positions[part].begin(), positions[part].end());
    for (const size_t position : positions[part]) result[part].push_back(batch[position]);
  }
  return result;
}

std::vector<GlobalBatch> length_sorted_batches(const ExampleLengths& lengths,
                                               int64_t batch_tokens) {
  const int64_t n = static_cast<int64_t>(lengths.src.size());
  const auto row = [&](int64_t i) { return std::max(lengths.src[i], lengths.tgt[i]) + 1; };
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return row(a) < row(b); });

  std::vector<GlobalBatch> batches;
  GlobalBatch current;
  for (int64_t i : order) {  // ascending rows: the newest row is the longest
    if (!current.empty() && static_cast<int64_t>(current.size() + 1) * row(i) > batch_tokens) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

}  // namespace data
