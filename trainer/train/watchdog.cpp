#include "trainer/train/watchdog.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>

#include "base/host_name.h"
#include "base/logging.h"
#include "base/seconds.h"
#include "base/text_format.h"
#include "trainer/train/exit_codes.h"

namespace train {

namespace {

using Clock = std::chrono::steady_clock;

// Runs `action` on a thread of its own and waits for it at most `grace`
// seconds: false when it has not returned by then (it is left running; the
// process is about to exit).
bool run_bounded(std::function<void()> action, double grace) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([action = std::move(action), done] {
    action();
    *done = true;
  }).detach();
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace);
  while (!*done && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return *done;
}

}  // namespace

Watchdog::Watchdog(double timeout_seconds, int rank, double abort_grace_seconds,
                   const char* setting)
    : timeout_(timeout_seconds),
      rank_(rank),
      abort_grace_(abort_grace_seconds),
      setting_(setting),
      host_(base::host_name()) {
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::beat(int64_t step, const char* phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
  phase_ = phase;
  since_ = Clock::now();
}

void Watchdog::beat(const char* phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  since_ = Clock::now();
}

void Watchdog::watch(distributed::Communicator* comm, const distributed::FlightRecorder* recorder,
                     SurvivorSave* survivor) {
  std::unique_lock<std::mutex> lock(mutex_);
  // The job is ending (end_job, which lets go of the mutex while a survivor
  // saves): what it uses must outlive it, so Watching's end waits for the exit.
  while (ending_) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    lock.lock();
  }
  comm_ = comm;
  recorder_ = recorder;
  survivor_ = survivor;
}

Watchdog::Watching::Watching(Watchdog& watchdog, distributed::Communicator* comm,
                             const distributed::FlightRecorder* recorder, SurvivorSave* survivor)
    : watchdog_(watchdog) {
  watchdog_.watch(comm, recorder, survivor);
}

Watchdog::Watching::~Watching() { watchdog_.watch(nullptr, nullptr, nullptr); }

std::string Watchdog::rank_on_host() const {
  return "rank " + (rank_ >= 0 ? std::to_string(rank_) : std::string("(not known yet)")) + " on " +
         host_;
}

void Watchdog::run() {
  const auto poll = std::chrono::duration<double>(timeout_ > 0 ? std::min(1.0, timeout_ / 4) : 1.0);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, poll, [this] { return stop_; })) {
    int code = 0;
    const std::string why = due(&code);
    if (!why.empty()) end_job(code, why, lock);
  }
}

std::string Watchdog::due(int* code) {
  const double stuck = base::seconds_since(since_);
  *code = kExitWatchdog;
  if (timeout_ > 0 && stuck > timeout_)
    return text::format(
        "watchdog: {} has been in '{}' of step {} for {:.0f} s (timeout {:g} s, {}); ending the "
        "job",
        rank_on_host(), phase_, step_, stuck, timeout_, setting_);
  *code = kExitFailed;
  if (comm_ != nullptr) {
    const std::string error = comm_->async_error();
    if (!error.empty())
      return text::format("{}, in '{}' of step {}: the {} communicator failed: {}; ending the job",
                          rank_on_host(), phase_, step_, comm_->backend(), error);
  }
  return survivor_ != nullptr ? survivor_->peer_lost(Clock::now()) : std::string();
}

void Watchdog::end_job(int code, const std::string& why, std::unique_lock<std::mutex>& lock) {
  ending_ = true;
  logging::critical("{}", why);
  if (recorder_ != nullptr) {
    const std::string in_flight = recorder_->oldest_unfinished();
    logging::critical("{}: collective in flight: {}", rank_on_host(),
                      in_flight.empty() ? std::string("none") : in_flight);
    logging::critical(
        "{}: its last collectives, oldest first (a number is the same collective on every "
        "rank):\n{}",
        rank_on_host(), recorder_->dump());
  }
  logging::flush();
  // Before the communicator's abort: MPI's ends the whole job. The training
  // thread may beat meanwhile (its peers may be alive after all).
  if (survivor_ != nullptr) {
    SurvivorSave* survivor = survivor_;
    lock.unlock();
    const double limit = timeout_ > 0 ? timeout_ : 600;
    if (!run_bounded([survivor] { survivor->save(); }, limit))
      logging::critical(
          "{}: the survivor checkpoint did not finish within {:g} s; exiting without it",
          rank_on_host(), limit);
    logging::flush();
    lock.lock();
  }
  if (comm_ != nullptr && !run_bounded([comm = comm_] { comm->abort(); }, abort_grace_)) {
    logging::critical(
        "{}: the {} communicator's abort did not return within {:g} s; exiting "
        "without it",
        rank_on_host(), comm_->backend(), abort_grace_);
    logging::flush();
  }
  std::_Exit(code);
}

}  // namespace train
