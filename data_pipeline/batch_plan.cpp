#include "data_pipeline/batch_plan.h"

namespace data {

BatchPlan::BatchPlan(const Batcher& batcher, const PlanOptions& options, int64_t step,
                     int64_t epoch, int64_t cursor)
    : batcher_(batcher),
      options_(options),
      step_(step),
      epoch_(epoch),
      cursor_(cursor),
      batches_(batcher.epoch(epoch)) {}

std::optional<PlannedStep> BatchPlan::next_step() {
  if (options_.max_steps > 0 && step_ >= options_.max_steps) return std::nullopt;
  if (cursor_ == static_cast<int64_t>(batches_.size())) {
    if (options_.max_epochs > 0 && epoch_ + 1 >= options_.max_epochs) return std::nullopt;
    batches_ = batcher_.epoch(++epoch_);
    cursor_ = 0;
  }
  std::vector<GlobalBatch> parts =
      batcher_.split(batches_[cursor_], options_.world_size * options_.accum_steps);
  PlannedStep planned;
  planned.step = ++step_;
  planned.epoch = epoch_;
  planned.cursor = cursor_++;
  for (int64_t a = 0; a < options_.accum_steps; ++a) {
    const int64_t part = micro_batch_index(options_.rank, a, options_.world_size);
    planned.micro_batches.push_back({a, part, std::move(parts[part])});
  }
  return planned;
}

}  // namespace data
