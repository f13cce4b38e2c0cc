// A run's resume state: what a checkpoint's state.json holds. This is the
// only place that names its keys: saving writes it, resuming and the
// evaluation job read it.
//
//   step, epoch, window, window_batch, cursor
//                             the position (data::PlanPosition): `step` steps
//                             done, the next global batch is batch
//                             `window_batch` of window `window` of `epoch`
//                             (data/batch_plan.h), number `cursor` of the
//                             epoch; window -1: a checkpoint from before
//                             windows, whose batch is found from the cursor
//   examples_ledger           the examples consumed up to `step`, in order: a
//                             SHA-256 chain (data::extend_ledger); equal in two
//                             runs: the same examples trained in the same order
//   best_valid_loss, checks_without_improvement   validation history
//   log_window                sums of the open log interval, so a run resumed
//                             mid-interval logs the same means
//   loss_scale                fp16's dynamic loss scale (train/loss_scaler.h);
//                             absent in older checkpoints and scale 0 when not fp16
//   world_size, accum_steps, dataset_id, config   what the run was; dataset_id
//                             is data::dataset_id (its content; older
//                             checkpoints: "dataset_manifest_sha256", which
//                             reads as the id of a dataset prepared before
//                             content_sha256)
//
// No random-generator state: data order derives from (run.seed, epoch),
// dropout from (run.seed, step, micro-batch).
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "data_pipeline/batch_plan.h"

namespace checkpoint {

// Sums over the steps of one log interval (updated steps only).
struct LogWindowSums {
  double smoothed = 0, nll = 0, tokens = 0, grad_norm = 0;
  int64_t steps = 0;
};

// fp16's dynamic loss scale and its finite steps in a row; scale 0: none.
struct LossScaleState {
  double scale = 0;
  int64_t good_steps = 0;
};

// The data plan's position (the one type the plan and the loop share), and
// what the loop keeps besides.
struct TrainState : data::PlanPosition {
  double best_valid_loss = std::numeric_limits<double>::infinity();
  int64_t checks_without_improvement = 0;
  LogWindowSums log_window;
  LossScaleState loss_scale;
};

// What the checkpoint was trained as (checked when resuming).
struct RunIdentity {
  int64_t world_size = 1, accum_steps = 1;
  std::string dataset_id;   // data/dataset_identity.h
  std::string config_toml;  // the resolved config
};

struct CheckpointState {
  TrainState train;
  RunIdentity run;

  nlohmann::json to_json() const;
  // Throws naming the missing or mistyped key.
  static CheckpointState from_json(const nlohmann::json& j);
};

}  // namespace checkpoint
