// Resuming: which checkpoint --resume picks, and whether a checkpoint fits
// this run (same model, same dataset; other settings change with a warning).
// The configs are hand-written TOML, the expected messages spelled out here.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/error_message.h"
#include "tests/unit/temp_dir_test.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/train_state.h"
#include "trainer/train/resume.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

// What `action` logs: stdout and stderr together, wherever the logger writes.
template <typename Action>
std::string logged_by(Action&& action) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  try {
    action();
  } catch (...) {
    std::fflush(nullptr);
    testing::internal::GetCapturedStdout();
    testing::internal::GetCapturedStderr();
    throw;
  }
  std::fflush(nullptr);
  const std::string out = testing::internal::GetCapturedStdout();
  return out + testing::internal::GetCapturedStderr();
}

// ---- does a checkpoint fit? ------------------------------------------------

const char* const kSha = "1111111111111111111111111111111111111111111111111111111111111111";
const char* const kCheckpoint = "runs/x/checkpoints/step_00000004";

// A resolved config as the trainer writes it, with one line replaced.
std::string config(const std::string& from = "", const std::string& to = "") {
  std::string toml =
      "[run]\nname = \"first\"\nout_dir = \"runs\"\nseed = 1\n"
      "[data]\ndir = \"data/a\"\nbatch_tokens = 300\n"
      "[model]\nd_model = 32\nheads = 4\nd_ff = 64\nnorm = \"pre\"\n"
      "[optim]\nlr = 0.5\nschedule = \"noam\"\n"
      "[train]\nmax_steps = 6\n";
  if (!from.empty()) {
    const auto at = toml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    toml.replace(at, from.size(), to);
  }
  return toml;
}

nlohmann::json saved_state(const std::string& toml = config()) {
  checkpoint::CheckpointState state;  // as the trainer writes state.json
  state.train.step = 4;
  state.run.config_toml = toml;
  state.run.dataset_id = kSha;
  return state.to_json();
}

TEST(ResumeCompatible, TheSameConfigFitsSilently) {
  EXPECT_EQ(
      logged_by([] { train::check_resume_compatible(kCheckpoint, saved_state(), config(), kSha); }),
      "");
}

TEST(ResumeCompatible, AnotherModelShapeIsRefusedNamingTheField) {
  expect_mentions(error_of([] {
                    train::check_resume_compatible(kCheckpoint, saved_state(),
                                                   config("d_ff = 64", "d_ff = 128"), kSha);
                  }),
                  {"cannot resume from " + std::string(kCheckpoint),
                   "model differs from the config: model.d_ff = 64 in the checkpoint, 128 now",
                   "another --run.name", "--resume none"});
  expect_mentions(error_of([] {
                    train::check_resume_compatible(kCheckpoint, saved_state(),
                                                   config("norm = \"pre\"", "norm = \"post\""),
                                                   kSha);
                  }),
                  {"model.norm = 'pre' in the checkpoint, 'post' now"});
}

TEST(ResumeCompatible, AModelKeyTheCheckpointLacksIsRefused) {
  expect_mentions(error_of([] {
                    train::check_resume_compatible(
                        kCheckpoint, saved_state(),
                        config("heads = 4\n", "heads = 4\nmax_positions = 128\n"), kSha);
                  }),
                  {"model.max_positions = (absent) in the checkpoint, 128 now"});
}

TEST(ResumeCompatible, AChangedOptimizerSettingIsAllowedWithAWarning) {
  const std::string log = logged_by([] {
    train::check_resume_compatible(kCheckpoint, saved_state(), config("lr = 0.5", "lr = 0.25"),
                                   kSha);
  });
  expect_mentions(log, {"resuming with optim.lr = 0.25 (the checkpoint was trained with 0.5)"});
  EXPECT_EQ(log.find("schedule"), std::string::npos) << "only the changed key is named: " << log;
}

// Each run's precision as it chose it (auto resolved): another one is said;
// a checkpoint whose config names none (older runs) says nothing.
TEST(ResumeCompatible, AnotherPrecisionIsSaid) {
  const std::string bf16 = config("max_steps = 6", "max_steps = 6\nprecision = \"bf16\"");
  const std::string fp32 = config("max_steps = 6", "max_steps = 6\nprecision = \"fp32\"");
  const std::string log = logged_by(
      [&] { train::check_resume_compatible(kCheckpoint, saved_state(bf16), fp32, kSha); });
  expect_mentions(
      log, {"resuming with train.precision = 'fp32' (the checkpoint was trained with 'bf16')"});
  EXPECT_EQ(logged_by([&] {
              train::check_resume_compatible(kCheckpoint, saved_state(bf16), bf16, kSha);
            }),
            "");
  EXPECT_EQ(
      logged_by([&] { train::check_resume_compatible(kCheckpoint, saved_state(), fp32, kSha); }),
      "");
}

TEST(ResumeCompatible, ChangedDataAndRunSettingsWarnExceptWhereTheRunLives) {
  const std::string log = logged_by([] {
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"batch_tokens = 300", "batch_tokens = 600"},
             {"seed = 1", "seed = 2"},
             {"name = \"first\"", "name = \"second\""},
             {"out_dir = \"runs\"", "out_dir = \"/elsewhere/runs\""},
             {"dir = \"data/a\"", "dir = \"/elsewhere/data\""},
             {"max_steps = 6", "max_steps = 60"}})
      train::check_resume_compatible(kCheckpoint, saved_state(), config(from, to), kSha);
  });
  expect_mentions(log,
                  {"resuming with data.batch_tokens = 600 (the checkpoint was trained with 300)",
                   "resuming with run.seed = 2 (the checkpoint was trained with 1)"});
  for (const char* silent : {"run.name", "run.out_dir", "data.dir", "max_steps"})
    EXPECT_EQ(log.find(silent), std::string::npos) << silent << " warned about: " << log;
}

TEST(ResumeCompatible, AnotherDatasetIsRefusedNamingBothHashes) {
  const std::string other(64, '2');
  expect_mentions(error_of([&] {
                    train::check_resume_compatible(kCheckpoint, saved_state(), config(), other);
                  }),
                  {kCheckpoint, "another dataset", kSha, other, "another --run.name"});
}

// ---- which checkpoint? --------------------------------------------------------

class ChooseCheckpoint : public test_util::TempDirTest {
 protected:
  checkpoint::Checkpoints checkpoints() const {
    return checkpoint::Checkpoints((dir_ / "run").string(), 10);
  }
  std::string save(int64_t step) const {
    torch::nn::Linear linear(2, 2);
    torch::optim::Adam adam(linear->parameters(), torch::optim::AdamOptions(0.1));
    checkpoint::Snapshot snapshot;
    checkpoint::take_snapshot(snapshot, step,
                              checkpoint::whole_checkpoint(*linear, adam, {{"step", step}}));
    return checkpoints().save(snapshot);
  }
  // The checkpoint resume_from loads, every file of it read (as the
  // trainer's load reads them all), "" for a fresh start.
  std::string choose(const checkpoint::CheckpointChoice& resume) const {
    return train::resume_from(checkpoints(), resume, [](const checkpoint::CheckpointFiles& files) {
      for (const auto& name : files.listed()) files.read(name);
    });
  }
  // Damages a checkpoint: model.pt no longer matches its digest.
  static void damage(const std::string& dir) {
    std::ofstream(fs::path(dir) / "model.pt", std::ios::app) << "x";
  }
};

TEST_F(ChooseCheckpoint, NoneIsAFreshStart) {
  save(2);
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse("none")), "");
}

TEST_F(ChooseCheckpoint, LatestWithoutCheckpointsIsAFreshStart) {
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse("latest")), "");
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse("auto")), "") << "latest's former name";
}

TEST_F(ChooseCheckpoint, BestIsTheMarkedOneAndMustExist) {
  expect_mentions(error_of([&] { choose(checkpoint::CheckpointChoice::parse("best")); }),
                  {"--resume best", "checkpoints/best"});
  const std::string two = save(2);
  save(4);
  checkpoints().mark_best(two);
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse("best")), two);
}

TEST_F(ChooseCheckpoint, AutoTakesTheNewestThatVerifiesAndWarnsAboutTheOthers) {
  const std::string two = save(2), four = save(4), six = save(6);
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse("latest")), six);
  damage(six);
  std::string chosen;
  const std::string log =
      logged_by([&] { chosen = choose(checkpoint::CheckpointChoice::parse("auto")); });
  EXPECT_EQ(chosen, four);
  expect_mentions(log, {"skipping checkpoint " + six, "model.pt does not match"});
  damage(four);
  damage(two);
  const std::string none_left =
      logged_by([&] { chosen = choose(checkpoint::CheckpointChoice::parse("auto")); });
  EXPECT_EQ(chosen, "") << "no intact checkpoint: a fresh start";
  expect_mentions(none_left, {"skipping checkpoint " + two, "skipping checkpoint " + four});
}

TEST_F(ChooseCheckpoint, ANamedCheckpointMustVerify) {
  const std::string two = save(2);
  save(4);
  EXPECT_EQ(choose(checkpoint::CheckpointChoice::parse(two)), two) << "a named one, not the newest";
  damage(two);
  expect_mentions(error_of([&] { choose(checkpoint::CheckpointChoice::parse(two)); }),
                  {"--resume " + two + ": checkpoint " + two + " fails verification",
                   "model.pt does not match"});
  const std::string missing = (dir_ / "run" / "checkpoints" / "step_00000009").string();
  expect_mentions(error_of([&] { choose(checkpoint::CheckpointChoice::parse(missing)); }),
                  {"--resume " + missing, "does not exist"});
  const std::string file = two + "/model.pt";
  expect_mentions(error_of([&] { choose(checkpoint::CheckpointChoice::parse(file)); }),
                  {"--resume " + file, "is a file, not a checkpoint directory"});
}

}  // namespace
