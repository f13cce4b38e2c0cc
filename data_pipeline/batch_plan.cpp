#include "data_pipeline/batch_plan.h"

#include <algorithm>

#include "data_pipeline/sha256.h"

namespace data {

BatchPlan::BatchPlan(const Batcher& batcher, const PlanOptions& options, const PlanPosition& start)
    : batcher_(batcher), options_(options), next_(start) {
  if (start.window >= 0) {  // clamped: changed data settings on resume move the windows
    load_window(start.epoch, std::min(start.window, batcher.num_windows() - 1));
    next_.batch = std::min<int64_t>(start.batch, static_cast<int64_t>(batches_.size()));
    return;
  }
  // A position saved before windows: global batch `cursor` of the epoch, counted window by window.
  int64_t remaining = start.cursor;
  load_window(start.epoch, 0);
  while (remaining > static_cast<int64_t>(batches_.size()) &&
         next_.window + 1 < batcher.num_windows()) {
    remaining -= static_cast<int64_t>(batches_.size());
    load_window(start.epoch, next_.window + 1);
  }
  next_.batch = std::min<int64_t>(remaining, static_cast<int64_t>(batches_.size()));
}

std::string position_moved(const Batcher& batcher, const PlanPosition& position) {
  if (position.window < 0) return "";  // saved before windows: counted by its cursor instead
  const int64_t window = std::min(position.window, batcher.num_windows() - 1);
  const auto batches = static_cast<int64_t>(batcher.window(position.epoch, window).size());
  if (window == position.window && position.batch <= batches) return "";
  return "the saved position, batch " + std::to_string(position.batch) + " of window " +
         std::to_string(position.window) + " of epoch " + std::to_string(position.epoch) +
         ", lies beyond the windows of this run's data settings (" +
         std::to_string(batcher.num_windows()) + " windows; window " + std::to_string(window) +
         " has " + std::to_string(batches) + " batches): training takes up the epoch at batch " +
         std::to_string(std::min(position.batch, batches)) + " of window " +
         std::to_string(window) + ", so part of it is skipped or seen twice";
}

std::string extend_ledger(const std::string& ledger, const GlobalBatch& batch) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ledger hashes int64 as stored");
  Sha256 hash;
  hash.update(ledger.data(), ledger.size());
  hash.update(batch.data(), batch.size() * sizeof(int64_t));
  return hash.hex();
}

void BatchPlan::load_window(int64_t epoch, int64_t window) {
  if (epoch != next_.epoch) next_.cursor = 0;
  next_.epoch = epoch;
  next_.window = window;
  next_.batch = 0;
  batches_ = batcher_.window(epoch, window);
}

std::optional<PlannedStep> BatchPlan::next_step() {
  if (options_.max_steps > 0 && next_.step >= options_.max_steps) return std::nullopt;
  while (next_.batch == static_cast<int64_t>(batches_.size())) {  // the window is done (or empty)
    if (next_.window + 1 < batcher_.num_windows()) {
      load_window(next_.epoch, next_.window + 1);
    } else if (options_.max_epochs > 0 && next_.epoch + 1 >= options_.max_epochs) {
      return std::nullopt;
    } else {
      load_window(next_.epoch + 1, 0);
    }
  }
  const GlobalBatch& batch = batches_[next_.batch];
  std::vector<GlobalBatch> parts = batcher_.split(batch, options_.world_size * options_.accum_steps);
  PlannedStep planned;
  planned.ledger = next_.ledger = extend_ledger(next_.ledger, batch);
  planned.step = ++next_.step;
  planned.epoch = next_.epoch;
  planned.window = next_.window;
  planned.batch = next_.batch++;
  planned.cursor = next_.cursor++;
  for (int64_t a = 0; a < options_.accum_steps; ++a) {
    const int64_t part = micro_batch_index(options_.rank, a, options_.world_size);
    planned.micro_batches.push_back({a, part, std::move(parts[part])});
  }
  return planned;
}

}  // namespace data
