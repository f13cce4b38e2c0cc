// A GoogleTest fixture for checkpoint tests: a fresh directory (dir_) with a
// run in it (run(), its checkpoints()) and a small model whose Adam has taken
// a step, so that its optimizer state holds moments.
#pragma once
#include <filesystem>
#include <string>

#include <torch/torch.h>

#include "tests/unit/temp_dir_test.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"

namespace test_util {

// True when SHA256SUMS lists what the checkpoint holds and matches every
// file; otherwise false and *why says what failed (CheckpointFiles' error).
inline bool verify_checkpoint(const std::string& checkpoint_dir, std::string* why) {
  try {
    const checkpoint::CheckpointFiles files(checkpoint_dir);
    for (const auto& name : files.listed()) files.check(name);
  } catch (const checkpoint::Unverified& e) {
    *why = e.what();
    return false;
  }
  why->clear();
  return true;
}

// The checkpoint's state.json, read and checked as a resume reads it.
inline nlohmann::json read_state(const std::string& checkpoint_dir) {
  const checkpoint::CheckpointFiles files(checkpoint_dir);
  return checkpoint::parse_checkpoint_state(files.read("state.json"), files.path("state.json"));
}

class CheckpointTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    torch::manual_seed(0);
    // One Adam step, so that optimizer.pt holds moments.
    linear_(torch::randn({4, 3})).sum().backward();
    adam_.step();
  }

  std::string run() const { return (dir_ / "run").string(); }
  std::filesystem::path checkpoints() const { return dir_ / "run" / "checkpoints"; }

  torch::nn::Linear linear_{3, 2};
  torch::optim::Adam adam_{linear_->parameters(), torch::optim::AdamOptions(1e-3)};
};

}  // namespace test_util
