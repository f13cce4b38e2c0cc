// The survivor's save (train/survivor_save.h), without MPI: when a peer
// counts as lost (a signal, then a wait for the peers that lasts
// dist.peer_lost_after_s, counted from the later of the two), which survivor
// writes (the first to claim <checkpoints>/.survivor; the claim names it),
// and when none does (a later step saved already, the replica not to be had
// because the training thread is not waiting for its peers or keeps it
// through validation, no loop yet, a sharded or GPU replica).
// RecordedCommunicator tells the waits around blocking collectives and
// wait(), and only there.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/logging.h"
#include "tests/unit/one_rank_communicator.h"
#include "trainer/distributed/flight_recorder.h"
#include "trainer/distributed/recorded_communicator.h"
#include "trainer/train/preemption.h"
#include "trainer/train/survivor_save.h"

namespace {

namespace fs = std::filesystem;
using Clock = train::SurvivorSave::Clock;
using std::chrono::milliseconds;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SurvivorSaveTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { logging::setup(0); }
  void SetUp() override {
    run_ = fs::temp_directory_path() /
           ("survivor-save-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(run_);
    fs::create_directories(run_ / "checkpoints");
  }
  void TearDown() override { fs::remove_all(run_); }

  // A replica of step 7 whose write counts itself.
  train::SurvivorSave::Replica replica(const checkpoint::Checkpoints& checkpoints) {
    return {&checkpoints, [] { return int64_t{7}; },
            [this] {
              ++writes_;
              return std::string("written");
            }};
  }

  fs::path run_;
  int writes_ = 0;
  train::PreemptionSignals signals_;
};

TEST_F(SurvivorSaveTest, APeerIsLostAfterASignalAndAWaitThatLasts) {
  train::SurvivorSave never(1, 0, signals_);
  train::SurvivorSave save(2, 3, signals_);  // the later one holds SIGCONT's handler
  const checkpoint::Checkpoints checkpoints(run_.string());
  train::SurvivorSave::Holding holding(save, replica(checkpoints));

  save.waiting(false);
  const auto t = Clock::now();
  EXPECT_EQ(save.peer_lost(t + std::chrono::seconds(60)), "") << "no signal yet";
  save.done_waiting();

  std::raise(SIGCONT);  // mpirun's first word of the job's end
  EXPECT_EQ(save.peer_lost(Clock::now()), "") << "not waiting for its peers";
  const auto signal_seen = Clock::now();
  EXPECT_EQ(save.peer_lost(signal_seen), "");  // seen (again) now
  save.waiting(false);                         // began after the signal: counted from here
  const auto began = Clock::now();
  EXPECT_EQ(save.peer_lost(began + milliseconds(2900)), "");
  const std::string why = save.peer_lost(began + milliseconds(3100));
  EXPECT_NE(why, "");
  EXPECT_NE(why.find("rank 2 on "), std::string::npos) << why;
  EXPECT_NE(why.find("SIGCONT received, and waiting for its peers 3 s after it"), std::string::npos)
      << why;
  save.done_waiting();
  EXPECT_EQ(save.peer_lost(began + std::chrono::seconds(20)), "") << "no longer waiting";
  save.waiting(false);
  EXPECT_EQ(save.peer_lost(began + std::chrono::seconds(40)), "")
      << "a SIGCONT counts for 30 s (a job suspended and resumed is not ended for a long wait)";
  save.done_waiting();
  EXPECT_EQ(never.peer_lost(began + std::chrono::seconds(60)), "") << "dist.peer_lost_after_s 0";
}

// Finishing a checkpoint, the other ranks wait for rank 0's write, which may
// take far longer than dist.peer_lost_after_s: a preemption's TERM heard
// meanwhile must not end the job as if a peer were lost. The replica is lent
// all the same, for a save that the watchdog begins.
TEST_F(SurvivorSaveTest, AWaitForLaggingPeersLendsTheReplicaButNoSignalEndsIt) {
  const checkpoint::Checkpoints checkpoints(run_.string());
  train::SurvivorSave save(1, 3, signals_);
  train::SurvivorSave::Holding holding(save, replica(checkpoints));
  std::raise(SIGCONT);
  EXPECT_EQ(save.peer_lost(Clock::now()), "");  // seen
  // Never ended here: after a save the training thread's wait never returns
  // (the process exits; done_waiting() would block this test for good).
  save.waiting(/*peers_may_lag=*/true);
  const auto began = Clock::now();
  EXPECT_EQ(save.peer_lost(began + std::chrono::seconds(10)), "")
      << "a signal during a wait for lagging peers ended the job";
  std::thread watchdog([&] { save.save(); });  // its timeout, or the communicator's error
  watchdog.join();
  EXPECT_EQ(writes_, 1) << "the replica was not lent during the wait";
}

TEST_F(SurvivorSaveTest, AWaitForPeersAfterTheLaggingOneCountsAgain) {
  const checkpoint::Checkpoints checkpoints(run_.string());
  train::SurvivorSave save(1, 3, signals_);
  train::SurvivorSave::Holding holding(save, replica(checkpoints));
  std::raise(SIGCONT);
  EXPECT_EQ(save.peer_lost(Clock::now()), "");
  save.waiting(/*peers_may_lag=*/true);
  save.done_waiting();
  save.waiting(false);
  EXPECT_NE(save.peer_lost(Clock::now() + std::chrono::seconds(4)), "")
      << "a step's collective after the lagging wait no longer counts as one";
  save.done_waiting();
}

TEST_F(SurvivorSaveTest, TheFirstSurvivorToClaimWritesAndTheOthersNameIt) {
  const checkpoint::Checkpoints checkpoints(run_.string());
  {
    train::SurvivorSave save(2, 3, signals_);
    train::SurvivorSave::Holding holding(save, replica(checkpoints));
    save.waiting(false);  // the training thread in a collective: the replica can be had
    save.save();
    EXPECT_EQ(writes_, 1);
    const std::string claim = read(run_ / "checkpoints" / ".survivor");
    EXPECT_EQ(claim.rfind("rank 2 on ", 0), 0u) << claim;
    EXPECT_NE(claim.find("(step 7)"), std::string::npos) << claim;
  }
  {
    train::SurvivorSave other(3, 3, signals_);
    train::SurvivorSave::Holding holding(other, replica(checkpoints));
    other.waiting(false);
    other.save();
    EXPECT_EQ(writes_, 1) << "a second survivor wrote too";
  }
}

TEST_F(SurvivorSaveTest, NoWriteWhereALaterStepIsSavedOrTheReplicaIsNotWhole) {
  const checkpoint::Checkpoints checkpoints(run_.string());
  fs::create_directory(run_ / "checkpoints" / "step_00000009");
  fs::create_directory_symlink("step_00000009", run_ / "checkpoints" / "latest");
  {
    train::SurvivorSave save(0, 3, signals_);
    train::SurvivorSave::Holding holding(save, replica(checkpoints));
    save.waiting(false);
    save.save();
    EXPECT_EQ(writes_, 0) << "step 9 is saved: step 7 must not become latest";
  }
  fs::remove(run_ / "checkpoints" / ".survivor");
  fs::remove(run_ / "checkpoints" / "latest");
  {
    train::SurvivorSave sharded(0, 3, signals_);
    sharded.unavailable("the update is sharded");
    sharded.save();
    EXPECT_EQ(writes_, 0);
    EXPECT_FALSE(fs::exists(run_ / "checkpoints" / ".survivor")) << "claimed without a replica";
  }
  {
    train::SurvivorSave before_the_loop(0, 3, signals_);
    before_the_loop.save();  // no replica yet: nothing to save, nothing claimed
    EXPECT_EQ(writes_, 0);
    EXPECT_FALSE(fs::exists(run_ / "checkpoints" / ".survivor"));
  }
  {
    // The training thread computing, not waiting for its peers: its replica
    // may be mid-step, and the save gives up after a while.
    train::SurvivorSave busy(0, 3, signals_);
    train::SurvivorSave::Holding holding(busy, replica(checkpoints));
    std::thread watchdog([&] { busy.save(); });
    watchdog.join();
    EXPECT_EQ(writes_, 0);
    EXPECT_FALSE(fs::exists(run_ / "checkpoints" / ".survivor"));
    // Validation's scope: its waits lend nothing either.
    {
      const train::SurvivorSave::Keeping keeping(busy);
      busy.waiting(false);
      std::thread validating([&] { busy.save(); });
      validating.join();
      busy.done_waiting();
    }
    EXPECT_EQ(writes_, 0);
  }
}

TEST_F(SurvivorSaveTest, SignalsDuringTheWriteDoNotEndIt) {
  const checkpoint::Checkpoints checkpoints(run_.string());
  train::SurvivorSave save(1, 3, signals_);
  std::raise(SIGTERM);  // what ended the job (srun's TERM, mpirun's after its CONT)
  bool written = false;
  train::SurvivorSave::Holding holding(
      save, {&checkpoints, [] { return int64_t{7}; },
             [&] {
               std::raise(SIGTERM);  // a second one, which outside a write exits at once
               written = true;
               return std::string("written");
             }});
  save.waiting(false);
  save.save();
  EXPECT_TRUE(written) << "the process lives on: the write was not cut short";
}

TEST_F(SurvivorSaveTest, TheFirstSaveMakesTheCheckpointsDirectory) {
  fs::remove_all(run_ / "checkpoints");  // lost before the run's first checkpoint
  const checkpoint::Checkpoints checkpoints(run_.string());
  train::SurvivorSave save(1, 3, signals_);
  train::SurvivorSave::Holding holding(save, replica(checkpoints));
  save.waiting(false);
  save.save();
  EXPECT_EQ(writes_, 1);
  EXPECT_TRUE(fs::exists(run_ / "checkpoints" / ".survivor"));
}

// The waits RecordedCommunicator reports: its blocking calls and wait(), not
// the start of a non-blocking collective or its test().
class CountingWaits : public launch::PeerWaits {
 public:
  void waiting(bool) override { ++begun; }
  void done_waiting() override { ++ended; }
  int begun = 0, ended = 0;
};

class DoneWork : public distributed::Work {
 public:
  bool test() override { return true; }
  void wait() override {}
};

class ImmediateCommunicator : public test_util::OneRankCommunicator {
  std::unique_ptr<distributed::Work> make_work() override { return std::make_unique<DoneWork>(); }
};

TEST(RecordedCommunicatorWaits, BlockingCallsAndWaitsAreWaitsForPeers) {
  distributed::FlightRecorder recorder;
  CountingWaits waits;
  distributed::RecordedCommunicator comm(std::make_unique<ImmediateCommunicator>(), recorder,
                                         &waits);
  torch::Tensor t = torch::zeros({4});
  comm.allreduce_sum(t);
  comm.barrier();
  EXPECT_EQ(waits.begun, 2);
  auto work = comm.iallreduce_sum(t);
  EXPECT_EQ(waits.begun, 2) << "starting a non-blocking collective is no wait";
  work->test();
  EXPECT_EQ(waits.begun, 2) << "test() is no wait";
  work->wait();
  EXPECT_EQ(waits.begun, 3);
  EXPECT_EQ(waits.ended, 3);
}

}  // namespace
