// The flight recorder (distributed/flight_recorder.h) and the communicator
// that fills it (recorded_communicator.h): sequence numbers in issue order,
// each entry's operation, size, step and state, a ring that keeps the newest.
#include <gtest/gtest.h>

#include "tests/unit/one_rank_communicator.h"
#include "trainer/distributed/flight_recorder.h"
#include "trainer/distributed/recorded_communicator.h"

namespace {

using distributed::FlightRecorder;

// One rank's communicator whose non-blocking work completes when the test says.
class OneRank : public test_util::OneRankCommunicator {
 public:
  struct ManualWork : distributed::Work {
    bool* done;
    explicit ManualWork(bool* d) : done(d) {}
    bool test() override { return *done; }
    void wait() override {}
  };
  bool done = false;
  bool completes_on_host() const override { return false; }  // as NCCL

 protected:
  std::unique_ptr<distributed::Work> make_work() override {
    return std::make_unique<ManualWork>(&done);
  }
};

TEST(FlightRecorder, KeepsTheNewestEntriesInOrder) {
  FlightRecorder recorder(/*capacity=*/3);
  for (int i = 0; i < 5; ++i) {
    recorder.set_step(10 + i);
    recorder.finish(recorder.start("allreduce", 1024 * (i + 1)), FlightRecorder::kDone);
  }
  const auto entries = recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].seq, 3u);
  EXPECT_EQ(entries[2].seq, 5u);
  EXPECT_EQ(entries[2].bytes, 5 * 1024);
  EXPECT_EQ(entries[2].step, 14);
  recorder.finish(1, FlightRecorder::kQueuedOnDevice);  // no longer in the ring: ignored
  EXPECT_EQ(recorder.oldest_unfinished(), "");
}

TEST(FlightRecorder, DumpSaysWhatIsInFlight) {
  FlightRecorder recorder;
  EXPECT_EQ(recorder.dump(), "(no collectives yet)");
  recorder.set_step(37);
  const auto t0 = FlightRecorder::Clock::now();
  recorder.finish(recorder.start("allreduce", 100 << 20), FlightRecorder::kQueuedOnDevice);
  recorder.start("barrier", 0);
  const std::string dump = recorder.dump(t0 + std::chrono::seconds(12));
  EXPECT_NE(dump.find("#1 allreduce 100.0 MiB, step 37: started 12.0 s ago, queued on the device"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("\n#2 barrier 0.0 MiB, step 37: started 12.0 s ago, in flight"),
            std::string::npos)
      << dump;
  EXPECT_EQ(recorder.oldest_unfinished().rfind("#1 allreduce", 0), 0u);
}

// One stream runs a device's collectives in order: one seen done means the
// earlier ones queued on the device are done too.
TEST(FlightRecorder, DoneImpliesTheEarlierQueuedOnesDone) {
  FlightRecorder recorder;
  const uint64_t a = recorder.start("reduce-scatter", 8), b = recorder.start("allgather", 8);
  const uint64_t c = recorder.start("allreduce", 8);
  recorder.finish(a, FlightRecorder::kQueuedOnDevice);
  recorder.finish(b, FlightRecorder::kQueuedOnDevice);
  recorder.finish(c, FlightRecorder::kQueuedOnDevice);
  EXPECT_EQ(recorder.oldest_unfinished().rfind("#1 reduce-scatter", 0), 0u);
  recorder.finish(b, FlightRecorder::kDone);
  const auto e = recorder.entries();
  EXPECT_EQ(e[0].state, FlightRecorder::kDone);
  EXPECT_EQ(e[1].state, FlightRecorder::kDone);
  EXPECT_EQ(e[2].state, FlightRecorder::kQueuedOnDevice);
  EXPECT_EQ(recorder.oldest_unfinished().rfind("#3 allreduce", 0), 0u);
}

TEST(RecordedCommunicator, RecordsEveryCollectiveAndItsEnd) {
  FlightRecorder recorder;
  auto inner = std::make_unique<OneRank>();
  OneRank& one = *inner;
  distributed::RecordedCommunicator comm(std::move(inner), recorder);
  torch::Tensor t = torch::zeros({256});  // 1 KiB
  comm.allreduce_sum(t);
  auto work = comm.iallreduce_sum(t);
  EXPECT_FALSE(work->test());
  comm.barrier();
  auto entries = recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_STREQ(entries[0].op, "allreduce");
  EXPECT_EQ(entries[0].bytes, 1024);
  EXPECT_EQ(entries[0].state, FlightRecorder::kQueuedOnDevice);
  EXPECT_EQ(entries[1].state, FlightRecorder::kInFlight);
  EXPECT_STREQ(entries[2].op, "barrier");
  work->wait();  // a device-side wait: the work is not complete yet
  EXPECT_EQ(recorder.entries()[1].state, FlightRecorder::kQueuedOnDevice);
  one.done = true;
  EXPECT_TRUE(work->test());
  entries = recorder.entries();
  EXPECT_EQ(entries[0].state, FlightRecorder::kDone);  // before it on the same stream
  EXPECT_EQ(entries[1].state, FlightRecorder::kDone);
  EXPECT_EQ(entries[2].state, FlightRecorder::kQueuedOnDevice);
}

}  // namespace
