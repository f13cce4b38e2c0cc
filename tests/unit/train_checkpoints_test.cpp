// Checkpoints on disk: what save writes (checked with sha256sum and by
// reading the files back), `latest` and `best`, pruning to keep_last, leftovers
// of a crash, background saves, and verification of damaged checkpoints (a
// checkpoint written by hand against known digests:
// train_checkpoint_files_test.cpp). The optimizer parts of a sharded update:
// train_optimizer_parts_test.cpp.
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "launch/peer_waits.h"
#include "launch/ranks.h"
#include "tests/unit/checkpoint_test.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "trainer/checkpoint/background_save.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

class Checkpoints : public test_util::CheckpointTest {
 protected:
  std::string save(const checkpoint::Checkpoints& c, int64_t step) {
    return c.save(snapshot_of(step, {{"step", step}}));
  }
  checkpoint::Snapshot snapshot_of(int64_t step, const nlohmann::json& state) {
    checkpoint::Snapshot snapshot;
    checkpoint::take_snapshot(snapshot, step, checkpoint::whole_checkpoint(*linear_, adam_, state));
    return snapshot;
  }
  // Names of the directories list() returns, oldest first.
  static std::vector<std::string> names(const checkpoint::Checkpoints& c) {
    std::vector<std::string> found;
    for (const auto& path : c.list()) found.push_back(fs::path(path).filename().string());
    return found;
  }

  const launch::Ranks ranks_;  // one process: no MPI
};

// Overwrites one byte in the middle of a file with its complement.
void flip_byte(const fs::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  const auto middle = static_cast<std::streamoff>(fs::file_size(file) / 2);
  f.seekg(middle);
  const char byte = static_cast<char>(f.get());
  f.seekp(middle);
  f.put(static_cast<char>(~byte));
}

TEST_F(Checkpoints, SaveWritesTheFilesTheirDigestsAndLatest) {
  const checkpoint::Checkpoints c(run());
  const std::string dir = save(c, 12);
  EXPECT_EQ(dir, (checkpoints() / "step_00000012").string());
  for (const char* file : {"model.pt", "optimizer.pt", "state.json", "SHA256SUMS"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / file)) << file;
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"),
            "step_00000012");  // relative: the run can move

  // Debian's sha256sum agrees with SHA256SUMS.
  const auto check = test_util::run_command("cd '" + dir + "' && sha256sum -c SHA256SUMS");
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("model.pt: OK"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("optimizer.pt: OK"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("state.json: OK"), std::string::npos) << check.output;

  // What was saved reads back: the state, the weights, the Adam moments.
  EXPECT_EQ(test_util::read_state(dir), nlohmann::json({{"step", 12}}));
  torch::nn::Linear weights(3, 2);
  checkpoint::load_state_dict(*weights, dir + "/model.pt");
  EXPECT_TRUE(torch::equal(weights->weight, linear_->weight));
  EXPECT_TRUE(torch::equal(weights->bias, linear_->bias));
  torch::optim::Adam adam(weights->parameters(), torch::optim::AdamOptions(1e-3));
  checkpoint::load_optimizer_state(adam, *weights, dir);
  const auto& state = static_cast<torch::optim::AdamParamState&>(*adam.state().begin()->second);
  EXPECT_EQ(state.step(), 1);
  EXPECT_EQ(adam.state().size(), 2u);
}

// Weights saved by earlier versions, with torch::pickle_save's type tag on the
// dict (which Python's torch.load refuses in weights_only mode), still load.
TEST_F(Checkpoints, WeightsInPickleSavesTaggedFormatStillLoad) {
  c10::Dict<std::string, torch::Tensor> tagged;
  for (const auto& p : linear_->named_parameters()) tagged.insert(p.key(), p.value().detach());
  const std::vector<char> bytes = torch::pickle_save(tagged);
  const std::string path = (dir_ / "tagged.pt").string();
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  torch::nn::Linear weights(3, 2);
  checkpoint::load_state_dict(*weights, path);
  EXPECT_TRUE(torch::equal(weights->weight, linear_->weight));
  EXPECT_TRUE(torch::equal(weights->bias, linear_->bias));
}

TEST_F(Checkpoints, PathOfAndListSortByStepNotByText) {
  const checkpoint::Checkpoints c(run(), 10);
  for (int64_t step : {100, 9, 10}) save(c, step);
  EXPECT_EQ(names(c),
            (std::vector<std::string>{"step_00000009", "step_00000010", "step_00000100"}));
  EXPECT_EQ(c.path_of(10), fs::canonical(checkpoints() / "step_00000010").string());
  // `latest` never moves back (a survivor's save of a later step may commit
  // before rank 0's of an earlier one: train/survivor_save.h); a run going
  // back moves the later checkpoints aside first (set_aside_after).
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse("latest")), c.path_of(100));
  EXPECT_EQ(c.latest_step(), 100);
}

TEST_F(Checkpoints, ListSkipsLinksTemporariesAndOtherFiles) {
  const checkpoint::Checkpoints c(run());
  save(c, 1);
  c.mark_best(c.path_of(1));
  fs::create_directory(checkpoints() / ".tmp-step_00000002-77");
  std::ofstream(checkpoints() / "notes.txt") << "not a checkpoint\n";
  EXPECT_EQ(names(c), std::vector<std::string>{"step_00000001"});
  EXPECT_TRUE(checkpoint::Checkpoints(dir_.string() + "/no-run").list().empty());
}

TEST_F(Checkpoints, KeepLastPrunesTheOldestButSparesTheBest) {
  const checkpoint::Checkpoints c(run(), 2);
  save(c, 1);
  c.mark_best(c.path_of(1));
  for (int64_t step = 2; step <= 5; ++step) save(c, step);
  EXPECT_EQ(names(c),
            (std::vector<std::string>{"step_00000001", "step_00000004", "step_00000005"}));
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse("best")), c.path_of(1));
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse("latest")), c.path_of(5));

  c.mark_best(c.path_of(5));  // a new best, among the newest 2: the old one is pruned at the next save
  save(c, 6);
  EXPECT_EQ(names(c), (std::vector<std::string>{"step_00000005", "step_00000006"}));
  save(c, 7);
  EXPECT_EQ(names(c),
            (std::vector<std::string>{"step_00000005", "step_00000006", "step_00000007"}));
}

// A run whose last save is also its new best (keep_last 1): the best it
// replaces goes in that save's pruning, and no checkpoint is left that is
// neither latest nor best.
TEST_F(Checkpoints, ASaveThatIsTheNewBestPrunesTheOldBest) {
  const checkpoint::Checkpoints c(run(), 1);
  const std::string one = c.begin_save(1);
  c.commit(1, one, c.write_part(snapshot_of(1, {{"step", 1}}), one), /*best=*/true);
  save(c, 2);  // the newest and the best
  EXPECT_EQ(names(c), (std::vector<std::string>{"step_00000001", "step_00000002"}));
  const std::string three = c.begin_save(3);
  c.commit(3, three, c.write_part(snapshot_of(3, {{"step", 3}}), three), /*best=*/true);
  EXPECT_EQ(names(c), std::vector<std::string>{"step_00000003"});
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse("best")), c.path_of(3));
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse("latest")), c.path_of(3));
}

TEST_F(Checkpoints, SavingTheSameStepAgainReplacesIt) {
  const checkpoint::Checkpoints c(run());
  save(c, 3);
  c.save(snapshot_of(3, {{"step", 3}, {"again", true}}));
  EXPECT_EQ(names(c), std::vector<std::string>{"step_00000003"});
  EXPECT_EQ(test_util::read_state(c.path_of(3)).at("again"), true);
}

TEST_F(Checkpoints, ResolveNamesWhatIsMissing) {
  const checkpoint::Checkpoints c(run());
  expect_mentions(error_of([&] { c.resolve(checkpoint::CheckpointChoice::parse("latest")); }),
                  {(checkpoints() / "latest").string(), "does not exist"});
  save(c, 1);
  expect_mentions(error_of([&] { c.resolve(checkpoint::CheckpointChoice::parse("best")); }),
                  {(checkpoints() / "best").string()});
  const std::string elsewhere = (dir_ / "elsewhere").string();
  expect_mentions(error_of([&] { c.resolve(checkpoint::CheckpointChoice::parse(elsewhere)); }),
                  {elsewhere, "does not exist"});
  EXPECT_EQ(c.resolve(checkpoint::CheckpointChoice::parse(c.path_of(1))), c.path_of(1));
}

TEST_F(Checkpoints, RemoveTemporariesRemovesOnlyDotNamedLeftovers) {
  const checkpoint::Checkpoints c(run());
  save(c, 1);
  fs::create_directories(checkpoints() / ".tmp-step_00000002-4242");
  std::ofstream(checkpoints() / ".tmp-step_00000002-4242" / "model.pt") << "half written";
  fs::create_directory_symlink("step_00000001", checkpoints() / ".latest-4242");
  c.remove_temporaries();
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(checkpoints()))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"latest", "step_00000001"}));
  checkpoint::Checkpoints(dir_.string() + "/no-run")
      .remove_temporaries();  // no directory: nothing to do
}

// (The earlier checkpoints staying intact is tests/resume/checkpoint_faults.sh's
// unwritable directory, which needs a user that permissions apply to.)
TEST_F(Checkpoints, AFailedSaveNamesStepAndDirectory) {
  fs::create_directories(dir_ / "run");
  std::ofstream(checkpoints()) << "a file where the checkpoint directory belongs";
  const checkpoint::Checkpoints c(run());
  expect_mentions(error_of([&] { save(c, 7); }),
                  {"saving the checkpoint of step 7 in " + checkpoints().string(),
                   "failed (there is no earlier checkpoint)"});
}

// A background save writes the snapshot: weights changed after it was taken
// (the next steps training) do not reach the file.
TEST_F(Checkpoints, BackgroundSaveWritesTheSnapshotNotTheLiveWeights) {
  const checkpoint::Checkpoints c(run());
  const torch::Tensor saved_weight = linear_->weight.detach().clone();
  {
    checkpoint::BackgroundSave saver(c, ranks_);
    saver.save(4, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 4}}), /*best=*/true);
    torch::NoGradGuard no_grad;
    linear_->weight.fill_(7);
    saver.finish();
  }
  const std::string dir = (checkpoints() / "step_00000004").string();
  std::string why;
  EXPECT_TRUE(test_util::verify_checkpoint(dir, &why)) << why;
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"), "step_00000004");
  EXPECT_EQ(fs::read_symlink(checkpoints() / "best"), "step_00000004");
  torch::nn::Linear weights(3, 2);
  checkpoint::load_state_dict(*weights, dir + "/model.pt");
  EXPECT_TRUE(torch::equal(weights->weight, saved_weight));
}

// A save's collectives tell the peer waits (a survivor's replica, lent in
// them) whether the peers may lag: beginning a save makes the other ranks
// wait for rank 0's directory; the commit once every file is written waits
// for the peers' arrival only; finishing one whose files may be in writing
// makes the other ranks, not rank 0 (this one), wait for rank 0's files.
TEST_F(Checkpoints, BackgroundSaveTellsItsWaitsWhetherThePeersMayLag) {
  struct Waits : launch::PeerWaits {
    std::vector<bool> lags;
    int open = 0;
    void waiting(bool peers_may_lag) override {
      lags.push_back(peers_may_lag);
      ++open;
    }
    void done_waiting() override { --open; }
  } waits;
  const checkpoint::Checkpoints c(run());
  checkpoint::BackgroundSave saver(c, ranks_, &waits);
  saver.save(1, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 1}}), false);
  EXPECT_EQ(waits.lags, (std::vector<bool>{false, true}))
      << "finishing none (rank 0's broadcast), then beginning 1";
  while (saver.writing()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  saver.commit();
  EXPECT_EQ(waits.lags, (std::vector<bool>{false, true, false})) << "the commit once written";
  saver.save(2, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 2}}), false);
  saver.finish();
  EXPECT_EQ(waits.lags, (std::vector<bool>{false, true, false, false, true, false, false}))
      << "finishing 1 (its broadcast), beginning 2, then finishing 2 on rank 0: its gathers "
         "and its broadcast";
  EXPECT_EQ(waits.open, 0);
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"), "step_00000002");
}

// Saves one after the other: each waits for the one before, reuses its host
// buffers and writes its own step's weights; `latest` ends on the last. A
// model of another shape gets buffers of its own.
TEST_F(Checkpoints, BackgroundSavesAreWrittenOneAtATimeInOrder) {
  const checkpoint::Checkpoints c(run());
  checkpoint::BackgroundSave saver(c, ranks_);
  torch::NoGradGuard no_grad;
  for (const int64_t step : {1, 2, 3}) {
    linear_->weight.fill_(static_cast<double>(step));
    saver.save(step, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", step}}), false);
  }
  torch::nn::Linear wider(5, 2);
  torch::optim::Adam wider_adam(wider->parameters(), torch::optim::AdamOptions(1e-3));
  wider->weight.fill_(4);
  saver.save(4, checkpoint::whole_checkpoint(*wider, wider_adam, {{"step", 4}}), false);
  saver.finish();
  EXPECT_EQ(names(c), (std::vector<std::string>{"step_00000001", "step_00000002", "step_00000003",
                                                "step_00000004"}));
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"), "step_00000004");
  for (const int64_t step : {1, 2, 3}) {
    torch::nn::Linear weights(3, 2);
    checkpoint::load_state_dict(*weights, c.path_of(step) + "/model.pt");
    EXPECT_TRUE(torch::equal(weights->weight, torch::full({2, 3}, static_cast<double>(step))))
        << step;
  }
  torch::nn::Linear weights(5, 2);
  checkpoint::load_state_dict(*weights, c.path_of(4) + "/model.pt");
  EXPECT_TRUE(torch::equal(weights->weight, torch::full({2, 5}, 4.0)));
}

// A write that fails (here: state.json, a string that is not UTF-8, which
// JSON cannot hold, after model.pt and optimizer.pt are written) throws on
// wait(), naming the step and directory; the previous checkpoint stays
// `latest` and no temporary is left.
TEST_F(Checkpoints, AFailedBackgroundSaveThrowsOnWaitAndKeepsTheLatest) {
  const checkpoint::Checkpoints c(run());
  checkpoint::BackgroundSave saver(c, ranks_);
  saver.save(5, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 5}}), false);
  saver.save(6, checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 6}, {"name", "\xff"}}),
             false);
  expect_mentions(error_of([&] { saver.finish(); }),
                  {"saving the checkpoint of step 6 in " + checkpoints().string(),
                   "earlier checkpoints are untouched"});
  EXPECT_NO_THROW(saver.finish());  // reported once
  EXPECT_EQ(fs::read_symlink(checkpoints() / "latest"), "step_00000005");
  EXPECT_EQ(names(c), std::vector<std::string>{"step_00000005"});
  for (const auto& entry : fs::directory_iterator(checkpoints()))
    EXPECT_NE(entry.path().filename().string().rfind(".tmp-", 0), 0u) << entry.path();
}

// A checkpoint that save wrote, damaged afterwards: verification fails and so
// does sha256sum -c.
TEST_F(Checkpoints, ADamagedSavedCheckpointFailsVerification) {
  const checkpoint::Checkpoints c(run());
  const std::string dir = save(c, 6);
  std::string why;
  ASSERT_TRUE(test_util::verify_checkpoint(dir, &why)) << why;
  flip_byte(fs::path(dir) / "model.pt");
  EXPECT_FALSE(test_util::verify_checkpoint(dir, &why));
  expect_mentions(why, {dir + "/model.pt", "does not match"});
  EXPECT_NE(test_util::run_command("cd '" + dir + "' && sha256sum --quiet -c SHA256SUMS").status,
            0);

  const std::string truncated = save(c, 7);
  fs::resize_file(fs::path(truncated) / "optimizer.pt",
                  fs::file_size(fs::path(truncated) / "optimizer.pt") - 100);
  EXPECT_FALSE(test_util::verify_checkpoint(truncated, &why));
  expect_mentions(why, {truncated + "/optimizer.pt", "does not match"});
}

}  // namespace
