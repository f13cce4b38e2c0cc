#include "trainer/checkpoint/train_state.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace checkpoint {

nlohmann::json CheckpointState::to_json() const {
  const TrainState& t = train;
  const LogWindowSums& w = t.log_window;
  return {{"step", t.step},
          {"epoch", t.epoch},
          {"window", t.window},
          {"window_batch", t.batch},
          {"cursor", t.cursor},
          {"examples_ledger", t.ledger},
          {"best_valid_loss",
           std::isfinite(t.best_valid_loss) ? nlohmann::json(t.best_valid_loss) : nlohmann::json()},
          {"checks_without_improvement", t.checks_without_improvement},
          {"log_window",
           {{"smoothed", w.smoothed},
            {"nll", w.nll},
            {"tokens", w.tokens},
            {"grad_norm", w.grad_norm},
            {"steps", w.steps}}},
          {"loss_scale", {{"scale", t.loss_scale.scale}, {"good_steps", t.loss_scale.good_steps}}},
          {"world_size", run.world_size},
          {"accum_steps", run.accum_steps},
          {"dataset_id", run.dataset_id},
          {"random_state",
           "none needed: data order from (run.seed, epoch), dropout from "
           "(run.seed, step, micro-batch)"},
          {"config", run.config_toml}};
}

CheckpointState CheckpointState::from_json(const nlohmann::json& j) {
  CheckpointState s;
  try {
    TrainState& t = s.train;
    t.step = j.at("step");
    t.epoch = j.at("epoch");
    t.cursor = j.at("cursor");
    t.window = j.contains("window") ? j.at("window").get<int64_t>() : -1;
    // A checkpoint from before the ledger: its chain goes on from this mark,
    // so it never equals a ledger recorded from the start.
    t.ledger = j.contains("examples_ledger") ? j.at("examples_ledger").get<std::string>()
                                             : "unrecorded before step " + std::to_string(t.step);
    t.batch = j.contains("window") ? j.at("window_batch").get<int64_t>() : 0;
    for (const auto& [key, value, least] : {std::tuple{"step", t.step, 0},
                                            {"epoch", t.epoch, 0},
                                            {"cursor", t.cursor, 0},
                                            {"window", t.window, -1},
                                            {"window_batch", t.batch, 0}})
      if (value < least)
        throw std::runtime_error(std::string("state.json: '") + key + "' is " +
                                 std::to_string(value) + ", below " + std::to_string(least));
    t.best_valid_loss = j.at("best_valid_loss").is_null() ? std::numeric_limits<double>::infinity()
                                                          : j.at("best_valid_loss").get<double>();
    t.checks_without_improvement = j.at("checks_without_improvement");
    const nlohmann::json& w = j.at("log_window");
    t.log_window = {w.at("smoothed"), w.at("nll"), w.at("tokens"), w.at("grad_norm"),
                    w.at("steps")};
    if (j.contains("loss_scale"))
      t.loss_scale = {j.at("loss_scale").at("scale"), j.at("loss_scale").at("good_steps")};
    s.run.world_size = j.at("world_size");
    s.run.accum_steps = j.at("accum_steps");
    s.run.dataset_id = j.at(j.contains("dataset_id") ? "dataset_id" : "dataset_manifest_sha256");
    s.run.config_toml = j.at("config");
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("state.json: ") + e.what());
  }
  return s;
}

}  // namespace checkpoint
