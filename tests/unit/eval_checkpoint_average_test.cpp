// Choosing the checkpoints to average beside a run that is still training:
// the run saves a checkpoint and prunes to keep_last 2 as fast as it can
// (checkpoint.h: the pruned one renamed away, then removed), while
// select_checkpoints(run, "latest", 2) is asked again and again, and each
// answer loaded (load_averaged: each model.pt read and checked). Each answer
// is two checkpoints in step order whose weights load, or the error that
// says one was removed while it was read; never a library's own message (a
// directory iterator's "No such file or directory" escaped here once in a
// few hundred answers).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/temp_dir_test.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/eval/checkpoint_average.h"

namespace {

class CheckpointAverage : public test_util::TempDirTest {
 protected:
  std::string run() const { return (dir_ / "run").string(); }
  void save(const checkpoint::Checkpoints& c, int64_t step) {
    checkpoint::Snapshot snapshot;
    checkpoint::take_snapshot(snapshot, step,
                              checkpoint::whole_checkpoint(*linear_, adam_, {{"step", step}}));
    c.save(snapshot);
  }
  torch::nn::Linear linear_{3, 2};
  torch::optim::Adam adam_{linear_->parameters(), torch::optim::AdamOptions(1e-3)};
};

TEST_F(CheckpointAverage, BesidePruningEachAnswerIsTwoCheckpointsOrSaysOneWasRemoved) {
  const checkpoint::Checkpoints c(run(), /*keep_last=*/2);
  save(c, 1);
  save(c, 2);
  std::atomic<bool> stop{false};
  std::string trainer_error;  // the saving thread's, reported after it is joined
  std::thread trainer([&] {
    try {
      for (int64_t step = 3; !stop; ++step) save(c, step);
    } catch (const std::exception& e) {
      trainer_error = e.what();
    }
  });
  int chosen = 0, removed = 0;
  torch::nn::Linear reader(3, 2);  // not linear_, which the saving thread reads
  std::vector<std::string> other;  // any other error, or a wrong answer: the defect
  // 400 answers, and on until one is two checkpoints (a loaded machine may
  // prune the older of every pair for a while).
  for (int ask = 0; (ask < 400 || chosen == 0) && ask < 4000 && other.empty(); ++ask) {
    try {
      const auto dirs =
          eval::select_checkpoints(run(), checkpoint::CheckpointChoice::parse("latest"), 2);
      if (dirs.size() != 2 || dirs[0] >= dirs[1]) {  // zero-padded step names: oldest first
        other.push_back("not two checkpoints, oldest first: " + std::to_string(dirs.size()));
        continue;
      }
      eval::load_averaged(*reader, dirs);
      ++chosen;
    } catch (const std::exception& e) {
      const std::string message = e.what();
      if (message.find("was removed while it was read: its training run keeps only") !=
          std::string::npos)
        ++removed;
      else
        other.push_back(message);
    }
  }
  stop = true;
  trainer.join();
  EXPECT_EQ(trainer_error, "");
  EXPECT_TRUE(other.empty()) << "after " << chosen << " answers and " << removed
                             << " removals: " << (other.empty() ? "" : other.front());
  EXPECT_GT(chosen, 0);  // the pruning leaves room to answer
}

}  // namespace
