// The micro-batches one rank trains on, in order (docs/DESIGN.md, "the global batch"):
//
//   step s+1 trains global batch `batch` of window `window` of epoch e
//   (Batcher::window(e, window)), the epoch's `cursor`-th, split into
//   world × accum parts; the rank's a-th micro-batch of the step is part
//   micro_batch_index(rank, a, world). next_step() hands out one step's
//   micro-batches at a time; the trainer's position advances only when it
//   has trained that step.
//
// The position (epoch, window, batch) is the whole resume state and means the
// same for any world size; `cursor` counts the epoch's global batches for
// people (and finds the window of a position saved before windows existed).
// Every rank's plan has the same number of micro-batches (empty parts
// included), so no rank runs out before the others. A plan holds one window.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data_pipeline/batcher.h"

namespace data {

struct PlannedMicroBatch {
  int64_t accum = 0;    // a: 0 .. accum_steps - 1
  int64_t part = 0;     // micro_batch_index(rank, a, world)
  GlobalBatch indices;  // dataset indices; empty for an empty part
};

// Where a plan stands: after `step` steps, the next global batch is batch
// `batch` of window `window` of `epoch`, number `cursor` of the epoch.
// window < 0: not recorded (a checkpoint from before windows); found from cursor.
// `ledger`: the examples consumed so far, in order (examples_ledger).
struct PlanPosition {
  int64_t step = 0, epoch = 0, window = 0, batch = 0, cursor = 0;
  std::string ledger;
};

// The examples ledger: a SHA-256 chain over the global batches trained, in
// order, "" before the first; ledger_n = hex(SHA-256(ledger_{n-1} || the
// dataset indices of batch n as int64 little-endian)). Every rank plans the
// same global batches, so the ledger is the same on every rank and for any
// world size and accumulation: two runs of one dataset (dataset_id) whose
// ledgers at step n are equal consumed the same examples in the same order,
// none skipped or seen twice (across preemptions, restarts and world-size
// changes alike; a step the numerics guard skipped consumed its batch too).
std::string extend_ledger(const std::string& ledger, const GlobalBatch& batch);

// One optimizer step: this rank's accum_steps micro-batches of one global batch.
struct PlannedStep {
  int64_t step = 0;                              // 1-based optimizer step
  int64_t epoch = 0, window = 0, batch = 0;      // of the step's global batch
  int64_t cursor = 0;                            // index of the step's global batch in its epoch
  std::vector<PlannedMicroBatch> micro_batches;  // [accum_steps]
  std::string ledger;                            // the examples ledger with this step's batch

  // Where the plan stands once this step is trained (what a checkpoint saves).
  PlanPosition after() const { return {step, epoch, window, batch + 1, cursor + 1, ledger}; }
};

struct PlanOptions {
  int64_t world_size = 1, rank = 0, accum_steps = 1;
  int64_t max_steps = 0;   // the plan ends after this step (0 = no limit)
  int64_t max_epochs = 0;  // ... or when this many epochs are done (0 = no limit)
};

// A resumed position that this batcher's windows do not hold (the run saved
// it under other data settings: data.batch_tokens, the sort window): what it
// is and where the plan takes it up instead; "" when it fits.
std::string position_moved(const Batcher& batcher, const PlanPosition& position);

class BatchPlan {
 public:
  // Starts at `start` (a resumed run's position; {} for a new run).
  BatchPlan(const Batcher& batcher, const PlanOptions& options, const PlanPosition& start = {});
  std::optional<PlannedStep> next_step();  // nullopt when the plan is done

 private:
  void load_window(int64_t epoch, int64_t window);

  const Batcher& batcher_;
  PlanOptions options_;
  PlanPosition next_;                 // the next step's batch (next_.step: steps planned so far)
  std::vector<GlobalBatch> batches_;  // of window next_.window of epoch next_.epoch
};

}  // namespace data
