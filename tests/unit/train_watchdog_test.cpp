// The watchdog (train/watchdog.h) ends the process, so each case runs in a
// death test (a child process): a communicator whose asynchronous error is set
// ends the job within its ~1 s poll, long before the timeout, naming the
// error, rank, host, step and the collective in flight; a rank stuck in a
// phase ends with 124 naming its host; and an abort that never returns (as
// ncclCommAbort can) does not keep the process from exiting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "base/logging.h"
#include "trainer/distributed/flight_recorder.h"
#include "trainer/train/exit_codes.h"
#include "trainer/train/watchdog.h"

namespace {

// A communicator with nothing to communicate: its asynchronous error and its
// abort are the test's to set.
class FakeCommunicator : public distributed::Communicator {
 public:
  std::string error;
  bool abort_blocks = false;
  int rank() const override { return 3; }
  int world_size() const override { return 4; }
  const char* backend() const override { return "fake"; }
  void allreduce_sum(torch::Tensor&) override {}
  std::unique_ptr<distributed::Work> iallreduce_sum(torch::Tensor&) override { return nullptr; }
  std::unique_ptr<distributed::Work> ireduce_scatter_sum(const torch::Tensor&,
                                                         torch::Tensor&) override {
    return nullptr;
  }
  std::unique_ptr<distributed::Work> iallgather_in_place(torch::Tensor&) override {
    return nullptr;
  }
  void broadcast(torch::Tensor&, int) override {}
  torch::Tensor allgather(const torch::Tensor& local) override { return local; }
  void barrier() override {}
  void abort() override {
    while (abort_blocks) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::string async_error() override {
    ++polls;
    return error;
  }
  std::atomic<int> polls{0};
};

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

void log_to_stderr() { logging::setup(3); }

TEST(WatchdogDeathTest, AsyncErrorEndsTheJobAtOnceNamingIt) {
  const auto run = [] {
    log_to_stderr();
    distributed::FlightRecorder recorder;
    recorder.set_step(41);
    recorder.finish(recorder.start("allreduce", 1 << 20), distributed::FlightRecorder::kDone);
    recorder.set_step(42);
    recorder.start("reduce-scatter", 2 << 20);
    FakeCommunicator comm;
    comm.error = "NCCL asynchronous error: remote process exited or there was a network error";
    train::Watchdog watchdog(/*timeout=*/600, /*rank=*/3);
    watchdog.beat(42, "allreduce");
    const train::Watchdog::Watching watching(watchdog, &comm, &recorder);
    std::this_thread::sleep_for(std::chrono::seconds(60));  // the timeout would be 600 s
  };
  EXPECT_EXIT(run(), testing::ExitedWithCode(train::kExitFailed),
              "rank 3 on " + host() +
                  ", in 'allreduce' of step 42: the fake communicator failed: NCCL asynchronous "
                  "error: remote process exited(.|\n)*collective in flight: #2 reduce-scatter "
                  "2.0 MiB, step 42(.|\n)*#1 allreduce 1.0 MiB, step 41: started .* done");
}

TEST(WatchdogDeathTest, StuckRankExits124NamingItsHost) {
  const auto run = [] {
    log_to_stderr();
    FakeCommunicator comm;
    distributed::FlightRecorder recorder;
    train::Watchdog watchdog(/*timeout=*/0.5, /*rank=*/3);
    watchdog.beat(7, "the device's work");
    const train::Watchdog::Watching watching(watchdog, &comm, &recorder);
    std::this_thread::sleep_for(std::chrono::seconds(60));
  };
  EXPECT_EXIT(run(), testing::ExitedWithCode(train::kExitWatchdog),
              "watchdog: rank 3 on " + host() +
                  " has been in 'the device's work' of step 7 .*\\(timeout 0.5 s, "
                  "train.watchdog_s\\)");
}

// The start-up watchdog names the variable its timeout came from.
TEST(WatchdogDeathTest, NamesTheSettingOfItsTimeout) {
  const auto run = [] {
    log_to_stderr();
    train::Watchdog watchdog(/*timeout=*/0.5, /*rank=*/-1, /*abort_grace=*/1,
                             "TRAINER_STARTUP_TIMEOUT_S");
    std::this_thread::sleep_for(std::chrono::seconds(60));
  };
  EXPECT_EXIT(run(), testing::ExitedWithCode(train::kExitWatchdog),
              "in 'start-up' .*\\(timeout 0.5 s, TRAINER_STARTUP_TIMEOUT_S\\)");
}

TEST(WatchdogDeathTest, AnAbortThatNeverReturnsDoesNotKeepTheProcess) {
  const auto run = [] {
    log_to_stderr();
    FakeCommunicator comm;
    comm.abort_blocks = true;
    distributed::FlightRecorder recorder;
    train::Watchdog watchdog(/*timeout=*/0.5, /*rank=*/3, /*abort_grace=*/0.5);
    const train::Watchdog::Watching watching(watchdog, &comm, &recorder);
    std::this_thread::sleep_for(std::chrono::seconds(60));
  };
  EXPECT_EXIT(run(), testing::ExitedWithCode(train::kExitWatchdog),
              "the fake communicator's abort did not return within 0.5 s");
}

// The watchdog polls while Watching lasts, about once a second, and not after.
TEST(Watchdog, PollsTheCommunicatorWhileWatching) {
  distributed::FlightRecorder recorder;
  train::Watchdog watchdog(/*timeout=*/0, /*rank=*/0);
  FakeCommunicator comm;
  {
    const train::Watchdog::Watching watching(watchdog, &comm, &recorder);
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  }
  const int polls = comm.polls;  // 3 at 1 s; fewer on a loaded machine, never more than 4
  EXPECT_GE(polls, 1);
  EXPECT_LE(polls, 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(comm.polls, polls) << "polled after Watching ended";
}

}  // namespace
