// TrainState (train/train_state.h), the one owner of state.json's keys, and
// Adam's state in a checkpoint (train/optimizer_state.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/train_state.h"

namespace {

TEST(TrainState, StateJsonRoundTripsAndNamesItsKeys) {
  checkpoint::CheckpointState s;
  s.train = {{1200, 3, 5, 2, 17, "5e1f"}, 1.25, 2, {10.5, 9.5, 400, 3.0, 2}, {}};
  s.run = {4, 2, "abc123", "[model]\nd_model = 8\n"};
  const nlohmann::json j = s.to_json();
  // The keys as a reader outside this code knows them (README, Python).
  EXPECT_EQ(j.at("step"), 1200);
  EXPECT_EQ(j.at("epoch"), 3);
  EXPECT_EQ(j.at("window"), 5);
  EXPECT_EQ(j.at("window_batch"), 2);
  EXPECT_EQ(j.at("cursor"), 17);
  EXPECT_EQ(j.at("examples_ledger"), "5e1f");
  EXPECT_EQ(j.at("best_valid_loss"), 1.25);
  EXPECT_EQ(j.at("log_window").at("tokens"), 400);
  EXPECT_EQ(j.at("world_size"), 4);
  EXPECT_EQ(j.at("dataset_id"), "abc123");
  const auto back = checkpoint::CheckpointState::from_json(j);
  EXPECT_EQ(back.to_json(), j);

  // fp16's loss scale round-trips; a checkpoint from before it has none (scale 0).
  s.train.loss_scale = {32768, 117};
  const auto scaled = checkpoint::CheckpointState::from_json(s.to_json());
  EXPECT_EQ(scaled.train.loss_scale.scale, 32768);
  EXPECT_EQ(scaled.train.loss_scale.good_steps, 117);
  nlohmann::json older = s.to_json();
  older.erase("loss_scale");
  EXPECT_EQ(checkpoint::CheckpointState::from_json(older).train.loss_scale.scale, 0);
  // A checkpoint from before the ledger: a mark no recorded ledger equals.
  older.erase("examples_ledger");
  EXPECT_EQ(checkpoint::CheckpointState::from_json(older).train.ledger,
            "unrecorded before step 1200");
  // A checkpoint from before windows has its cursor only: window -1.
  older.erase("window");
  older.erase("window_batch");
  EXPECT_EQ(checkpoint::CheckpointState::from_json(older).train.window, -1);
  EXPECT_EQ(checkpoint::CheckpointState::from_json(older).train.cursor, 17);
  // A checkpoint from before dataset_id named its dataset by the manifest's sha256.
  older["dataset_manifest_sha256"] = older.at("dataset_id");
  older.erase("dataset_id");
  EXPECT_EQ(checkpoint::CheckpointState::from_json(older).run.dataset_id, "abc123");

  checkpoint::CheckpointState fresh;  // no validation yet: null, read back as infinity
  EXPECT_TRUE(fresh.to_json().at("best_valid_loss").is_null());
  EXPECT_TRUE(
      std::isinf(checkpoint::CheckpointState::from_json(fresh.to_json()).train.best_valid_loss));

  nlohmann::json negative = j;
  negative["window_batch"] = -1;
  test_util::expect_mentions(
      test_util::error_of([&] { checkpoint::CheckpointState::from_json(negative); }),
      {"state.json", "'window_batch' is -1"});

  nlohmann::json broken = j;
  broken.erase("cursor");
  test_util::expect_mentions(
      test_util::error_of([&] { checkpoint::CheckpointState::from_json(broken); }),
      {"state.json", "cursor"});
}

struct Tiny : torch::nn::Module {
  Tiny() {
    a = register_module("a", torch::nn::Linear(3, 4));
    b = register_module("b", torch::nn::Linear(4, 2));
  }
  torch::Tensor forward(const torch::Tensor& x) { return b(torch::tanh(a(x))); }
  torch::nn::Linear a{nullptr}, b{nullptr};
};

void steps(Tiny& model, torch::optim::Adam& adam, int n, int seed) {
  torch::manual_seed(seed);
  for (int i = 0; i < n; ++i) {
    adam.zero_grad();
    model.forward(torch::randn({5, 3})).pow(2).sum().backward();
    adam.step();
  }
}

class OptimizerState : public test_util::TempDirTest {};

TEST_F(OptimizerState, ResumedAdamContinuesBitwise) {
  torch::manual_seed(1);
  Tiny model, copy;
  torch::optim::Adam adam(model.parameters(), torch::optim::AdamOptions(0.01));
  steps(model, adam, 3, 7);
  const std::string path = (dir_ / "optimizer.pt").string();
  checkpoint::save_tensors(checkpoint::optimizer_tensors(adam, model), path);

  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < model.parameters().size(); ++i)
      copy.parameters()[i].copy_(model.parameters()[i]);
  }
  torch::optim::Adam resumed(copy.parameters(), torch::optim::AdamOptions(0.01));
  checkpoint::load_optimizer_state(resumed, copy, dir_.string());
  steps(model, adam, 2, 9);
  steps(copy, resumed, 2, 9);
  for (size_t i = 0; i < model.parameters().size(); ++i)
    EXPECT_TRUE(torch::equal(model.parameters()[i], copy.parameters()[i])) << i;
}

TEST_F(OptimizerState, PythonReadsItAsAStateDictOfCpuTensorsInWeightsOnlyMode) {
  Tiny model;
  torch::optim::Adam adam(model.parameters(), torch::optim::AdamOptions(0.01));
  steps(model, adam, 2, 3);
  const std::string path = (dir_ / "optimizer.pt").string();
  checkpoint::save_tensors(checkpoint::optimizer_tensors(adam, model), path);
  const auto result = test_util::run_command(
      test_paths::python() + " -c 'import torch; d = torch.load(\"" + path +
      "\", weights_only=True); print(sorted(d)); print(int(d[\"a.weight.step\"]), "
      "all(t.device.type == \"cpu\" "
      "for t in d.values()), tuple(d[\"b.weight.exp_avg\"].shape))'");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("'a.bias.exp_avg', 'a.bias.exp_avg_sq', 'a.bias.step'"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("2 True (2, 4)"), std::string::npos) << result.output;
}

TEST_F(OptimizerState, AnotherModelIsRefusedByName) {
  Tiny model;
  torch::optim::Adam adam(model.parameters(), torch::optim::AdamOptions(0.01));
  steps(model, adam, 1, 3);
  const std::string path = (dir_ / "optimizer.pt").string();
  checkpoint::save_tensors(checkpoint::optimizer_tensors(adam, model), path);
  torch::nn::Linear other(3, 4);  // names weight/bias, not a.weight/...
  torch::optim::Adam other_adam(other->parameters(), torch::optim::AdamOptions(0.01));
  test_util::expect_mentions(test_util::error_of([&] {
                               checkpoint::load_optimizer_state(other_adam, *other, dir_.string());
                             }),
                             {path, "belongs to no parameter"});
}

}  // namespace
