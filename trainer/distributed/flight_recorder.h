// The last collectives of this rank, for the message that ends a hung or
// failed job (what PyTorch's ProcessGroupNCCL calls its flight recorder).
//
// Every rank issues the same collectives in the same order, so a collective's
// sequence number names the same operation on every rank: when ranks stop,
// their rings, printed side by side in the log, say which rank is behind at
// which collective (the one whose newest entry has the smallest number, or
// the one still in flight where the others have gone on).
//
//   recorder.set_step(n);                          // the training loop, each step
//   const uint64_t seq = recorder.start("allreduce", bytes);
//   recorder.finish(seq, FlightRecorder::kDone);   // or kQueuedOnDevice
//   recorder.dump()                                // the ring, oldest first
//
// Thread-safe: collectives start on the main thread and on autograd's device
// thread; the watchdog's thread reads.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace distributed {

class FlightRecorder {
 public:
  enum State { kInFlight, kQueuedOnDevice, kDone };
  using Clock = std::chrono::steady_clock;
  struct Entry {
    uint64_t seq = 0;
    const char* op = "";  // a string literal
    int64_t bytes = 0;
    int64_t step = 0;
    Clock::time_point started, finished;
    State state = kInFlight;
  };

  explicit FlightRecorder(size_t capacity = 64);
  void set_step(int64_t step);
  uint64_t start(const char* op, int64_t bytes);  // its sequence number (1, 2, ...)
  // kDone: complete, and so are the earlier ones queued on the device (one
  // stream runs them in order); kQueuedOnDevice: the device waits for it
  // (NCCL), the host has moved on. A number no longer in the ring is ignored.
  void finish(uint64_t seq, State state);

  // One line per entry, oldest first, times relative to `now`:
  // "#412 allreduce 100.0 MiB, step 37: started 12.3 s ago, in flight".
  std::string dump(Clock::time_point now = Clock::now()) const;
  // The oldest collective not known done ("" when none), in the same form:
  // where a hung rank waits.
  std::string oldest_unfinished(Clock::time_point now = Clock::now()) const;
  std::vector<Entry> entries() const;  // oldest first

 private:
  mutable std::mutex mutex_;
  std::vector<Entry> ring_;
  uint64_t next_seq_ = 1;
  int64_t step_ = 0;
};

}  // namespace distributed
