#include "data_pipeline/batch_plan.h"

namespace data {

BatchPlan::BatchPlan(const Batcher& batcher, const PlanOptions& options, int64_t step,
                     int64_t epoch, int64_t cursor)
    : batcher_(batcher), options_(options), step_(step), epoch_(epoch), cursor_(cursor),
      batches_(batcher.epoch(epoch)), accum_(options.accum_steps) {}

std::optional<PlannedMicroBatch> BatchPlan::next() {
  if (accum_ == options_.accum_steps) {  // the next step's global batch
    if (options_.max_steps > 0 && step_ >= options_.max_steps) return std::nullopt;
    if (cursor_ == static_cast<int64_t>(batches_.size())) {
      if (options_.max_epochs > 0 && epoch_ + 1 >= options_.max_epochs) return std::nullopt;
      batches_ = batcher_.epoch(++epoch_);
      cursor_ = 0;
    }
    parts_ = batcher_.split(batches_[cursor_++], options_.world_size * options_.accum_steps);
    ++step_;
    accum_ = 0;
  }
  PlannedMicroBatch planned;
  planned.step = step_;
  planned.epoch = epoch_;
  planned.cursor = cursor_ - 1;
  planned.accum = accum_;
  planned.part = micro_batch_index(options_.rank, accum_, options_.world_size);
  planned.last_of_step = accum_ + 1 == options_.accum_steps;
  planned.indices = std::move(parts_[planned.part]);
  ++accum_;
  return planned;
}

}  // namespace data
