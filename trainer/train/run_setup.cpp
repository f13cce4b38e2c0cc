#include "trainer/train/run_setup.h"

#include <stdexcept>

#include "base/logging.h"
#include "trainer/runtime/precision.h"

namespace train {

data::DatasetOptions dataset_options(const config::RunConfig& cfg) {
  data::DatasetOptions o;
  o.verify_checksums = cfg.data.verify_checksums;
  return o;
}

data::BatcherOptions batcher_options(const config::RunConfig& cfg) {
  data::BatcherOptions o;
  o.batch_tokens = cfg.data.batch_tokens;
  o.max_len = cfg.data.max_len;
  o.seed = static_cast<uint64_t>(cfg.run.seed);
  return o;
}

data::PlanOptions plan_options(const config::RunConfig& cfg, const launch::Ranks& ranks) {
  data::PlanOptions o;
  o.world_size = ranks.size();
  o.rank = ranks.rank();
  o.accum_steps = cfg.train.accum_steps;
  o.max_steps = cfg.train.max_steps;
  o.max_epochs = cfg.train.max_epochs;
  return o;
}

choices::Precision chosen_precision(choices::Precision setting, const torch::Device& device,
                                    const launch::Ranks& ranks) {
  runtime::PrecisionChoice choice = runtime::choose_precision(setting, device);
  if (setting == choices::Precision::kAuto &&
      ranks.any(choice.precision != choices::Precision::kBf16) &&
      choice.precision == choices::Precision::kBf16)
    choice = {choices::Precision::kFp32, "auto: another rank's device has no bfloat16"};
  if (choice.precision == choices::Precision::kFp16 && !device.is_cuda())
    throw std::invalid_argument("train.precision = fp16 needs a CUDA device, not " + device.str() +
                                " (on CPUs: bf16)");
  logging::info("precision: {} ({})", runtime::precision_name(choice.precision), choice.reason);
  if (ranks.any(!choice.warning.empty()) && ranks.is_main())
    logging::warn("{}", choice.warning.empty() ? "train.precision = bf16 on another rank's CPU, "
                                                 "which has no bfloat16 instructions: it will "
                                                 "emulate them and hold the others back"
                                               : choice.warning);
  return choice.precision;
}

std::string saved_config(config::RunConfig cfg, choices::Precision precision) {
  cfg.train.precision = precision;
  return config::to_toml(cfg);
}

// On a CPU the host holds what training keeps beside the weights: their
// gradients and Adam's two moments, the moments counted only where the rank
// updates them all (a sharded update keeps a share: at least none). A lower
// bound: the activations and a background save's snapshot come on top.
task::TaskModel initialised_model(const config::RunConfig& cfg, const data::Manifest& manifest,
                                  const torch::Device& device, bool sharded) {
  torch::manual_seed(static_cast<uint64_t>(cfg.run.seed));
  const int copies = device.is_cpu() ? (sharded ? 2 : 4) : 1;
  task::TaskModel model = task::make_task_model(cfg, manifest, copies);
  model.module().to(device);
  return model;
}

}  // namespace train
