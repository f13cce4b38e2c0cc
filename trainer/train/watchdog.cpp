#include "trainer/train/watchdog.h"

#include <cstdlib>

#include "launch/logging.h"
#include "trainer/train/exit_codes.h"

namespace train {

Watchdog::Watchdog(double timeout_seconds, int rank) : timeout_(timeout_seconds), rank_(rank) {
  if (timeout_ > 0) thread_ = std::thread([this] { watch(); });
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
  since_ = std::chrono::steady_clock::now();
}

void Watchdog::beat(const char* phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  since_ = std::chrono::steady_clock::now();
}

void Watchdog::on_timeout(std::function<void()> action) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_timeout_ = std::move(action);
}

void Watchdog::watch() {
  const auto poll = std::chrono::duration<double>(std::min(1.0, timeout_ / 4));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, poll, [this] { return stop_; })) {
    const double stuck =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
    if (stuck > timeout_) {
      logging::critical(
          "watchdog: rank {} has been in '{}' of step {} for {:.0f} s "
          "(timeout {:g} s); ending the job",
          rank_ >= 0 ? std::to_string(rank_) : std::string("(not known yet)"), phase_, step_, stuck,
          timeout_);
      logging::flush();
      if (on_timeout_) on_timeout_();
      std::_Exit(kExitWatchdog);
    }
  }
}

}  // namespace train
