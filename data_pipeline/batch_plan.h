// The micro-batches one rank trains on, in order (docs/DESIGN.md, "the global batch"):
//
//   step s+1 trains global batch `cursor` of epoch e (Batcher::epoch(e)),
//   split into world × accum parts; the rank's a-th micro-batch of the step
//   is part micro_batch_index(rank, a, world). next_step() hands out one
//   step's micro-batches at a time; the trainer's position (step, epoch,
//   cursor) advances only when it has trained that step.
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
  int64_t accum = 0;    // a: 0 .. accum_steps - 1
  int64_t part = 0;     // micro_batch_index(rank, a, world)
  GlobalBatch indices;  // dataset indices; empty for an empty part
};

// One optimizer step: this rank's accum_steps micro-batches of one global batch.
struct PlannedStep {
  int64_t step = 0;                              // 1-based optimizer step
  int64_t epoch = 0;                             // of the step's global batch
  int64_t cursor = 0;                            // index of the step's global batch in its epoch
  std::vector<PlannedMicroBatch> micro_batches;  // [accum_steps]
};

struct PlanOptions {
  int64_t world_size = 1, rank = 0, accum_steps = 1;
  int64_t max_steps = 0;   // the plan ends after this step (0 = no limit)
  int64_t max_epochs = 0;  // ... or when this many epochs are done (0 = no limit)
};

class BatchPlan {
 public:
  // Starts after `step` steps, at global batch `cursor` of `epoch` (a resumed run's state).
  BatchPlan(const Batcher& batcher, const PlanOptions& options, int64_t step = 0, int64_t epoch = 0,
            int64_t cursor = 0);
  std::optional<PlannedStep> next_step();  // nullopt when the plan is done

 private:
  const Batcher& batcher_;
  PlanOptions options_;
  int64_t step_, epoch_, cursor_;     // the position after the last planned step
  std::vector<GlobalBatch> batches_;  // of epoch_
};

}  // namespace data
