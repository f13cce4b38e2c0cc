// The micro-batches one rank trains on, in order (DESIGN.md, "the global batch"):
//
//   step s+1 trains global batch `cursor` of epoch e (Batcher::epoch(e)),
//   split into world × accum parts; the rank's a-th micro-batch of the step
//   is part micro_batch_index(rank, a, world).
//
// The position (epoch, cursor) is the whole resume state and means the same
// for any world size. Every rank's plan has the same number of micro-batches
// (empty parts included), so no rank runs out before the others.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "data_pipeline/batcher.h"

namespace data {

struct PlannedMicroBatch {
  int64_t step = 0;    // 1-based optimizer step
  int64_t epoch = 0;   // of the step's global batch
  int64_t cursor = 0;  // index of the step's global batch in its epoch
  int64_t accum = 0;   // a: 0 .. accum_steps - 1
  int64_t part = 0;    // micro_batch_index(rank, a, world)
  bool last_of_step = false;
  GlobalBatch indices;  // dataset indices; empty for an empty part
};

struct PlanOptions {
  int64_t world_size = 1, rank = 0, accum_steps = 1;
  int64_t max_steps = 0;   // the plan ends after this step (0 = no limit)
  int64_t max_epochs = 0;  // ... or when this many epochs are done (0 = no limit)
};

class BatchPlan {
 public:
  // Starts after `step` steps, at global batch `cursor` of `epoch` (a resumed run's state).
  BatchPlan(const Batcher& batcher, const PlanOptions& options, int64_t step = 0,
            int64_t epoch = 0, int64_t cursor = 0);
  std::optional<PlannedMicroBatch> next();  // nullopt when the plan is done

 private:
  const Batcher& batcher_;
  PlanOptions options_;
  int64_t step_, epoch_, cursor_;
  std::vector<GlobalBatch> batches_;  // of epoch_
  std::vector<GlobalBatch> parts_;    // of the current step
  int64_t accum_ = 0;                 // next micro-batch of the current step
};

}  // namespace data
