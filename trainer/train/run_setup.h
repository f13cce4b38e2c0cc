// What a training run derives from its config before its first step: the
// data's options, the precision (decided by all ranks together), the config
// as the run saves it, and the initialised model.
#pragma once
#include <string>

#include <torch/torch.h>

#include "data_pipeline/batch_plan.h"
#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/manifest.h"
#include "launch/ranks.h"
#include "trainer/choices/compute.h"
#include "trainer/config/run_config.h"
#include "trainer/task/task_model.h"

namespace train {

data::DatasetOptions dataset_options(const config::RunConfig& cfg);
data::BatcherOptions batcher_options(const config::RunConfig& cfg);
// This rank's part of each global batch.
data::PlanOptions plan_options(const config::RunConfig& cfg, const launch::Ranks& ranks);

// train.precision for `device`, with the reason in the log (auto: bf16 where
// the device has bfloat16 units; runtime/precision.h). Collective: auto is
// bf16 only where every rank's device has it, so that ranks on nodes of
// different CPUs or GPUs train alike.
choices::Precision chosen_precision(choices::Precision setting, const torch::Device& device,
                                    const launch::Ranks& ranks);

// The config as the run saves it (config.toml, each checkpoint's state), with
// train.precision = auto replaced by what this run chose, so that they say
// how it trained.
std::string saved_config(config::RunConfig cfg, choices::Precision precision);

// The model as configured, initialised from run.seed (rank 0's initialisation
// is broadcast to all ranks at the start), on `device`. `sharded`: the rank
// updates a share of the weights (dist.shard_update) and so holds a share of
// Adam's moments, which the host memory check counts (task/task_model.h).
task::TaskModel initialised_model(const config::RunConfig& cfg, const data::Manifest& manifest,
                                  const torch::Device& device, bool sharded);

}  // namespace train
