#include "trainer/distributed/flight_recorder.h"

#include <cstdio>

#include "base/seconds.h"

namespace distributed {

namespace {

std::string describe(const FlightRecorder::Entry& e, FlightRecorder::Clock::time_point now) {
  char line[256];
  std::snprintf(line, sizeof(line), "#%llu %s %.1f MiB, step %lld: started %.1f s ago, ",
                static_cast<unsigned long long>(e.seq), e.op, e.bytes / 1048576.0,
                static_cast<long long>(e.step), base::seconds(now - e.started));
  std::string text = line;
  if (e.state == FlightRecorder::kInFlight) return text + "in flight";
  std::snprintf(line, sizeof(line), "%s after %.3f s",
                e.state == FlightRecorder::kDone ? "done" : "queued on the device",
                base::seconds(e.finished - e.started));
  return text + line;
}

}  // namespace

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity) {}

void FlightRecorder::set_step(int64_t step) {
  const std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
}

uint64_t FlightRecorder::start(const char* op, int64_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t seq = next_seq_++;
  ring_[seq % ring_.size()] = Entry{seq, op, bytes, step_, Clock::now(), {}, kInFlight};
  return seq;
}

void FlightRecorder::finish(uint64_t seq, State state) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = Clock::now();
  Entry& e = ring_[seq % ring_.size()];
  if (e.seq != seq || e.state == kDone) return;
  if (e.state == kInFlight || state == kDone) e.finished = now;
  e.state = state;
  if (state != kDone) return;
  for (Entry& earlier : ring_)
    if (earlier.seq < seq && earlier.state == kQueuedOnDevice) earlier.state = kDone;
}

std::vector<FlightRecorder::Entry> FlightRecorder::entries() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Entry> out;
  const uint64_t first = next_seq_ > ring_.size() ? next_seq_ - ring_.size() : 1;
  for (uint64_t seq = first; seq < next_seq_; ++seq) out.push_back(ring_[seq % ring_.size()]);
  return out;
}

std::string FlightRecorder::dump(Clock::time_point now) const {
  std::string text;
  for (const Entry& e : entries()) {
    if (!text.empty()) text += '\n';
    text += describe(e, now);
  }
  return text.empty() ? "(no collectives yet)" : text;
}

std::string FlightRecorder::oldest_unfinished(Clock::time_point now) const {
  for (const Entry& e : entries())
    if (e.state != kDone) return describe(e, now);
  return "";
}

}  // namespace distributed
