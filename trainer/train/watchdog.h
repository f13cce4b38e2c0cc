// The watchdog: a thread that ends the job when this rank makes no progress.
// The training loop calls beat(step, phase) as it enters each phase (data,
// forward/backward, allreduce, update, the device's work: waiting for a
// queued step to finish, validation, checkpoint); when one phase lasts
// longer than the timeout — a collective whose peer died or hung,
// a stuck file system — the rank logs which step and phase, and exits with
// kExitWatchdog. mpirun then ends the other ranks: no survivor waits forever.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace train {

class Watchdog {
 public:
  Watchdog(double timeout_seconds, int rank);  // timeout 0: no watchdog; rank -1: not known yet
  ~Watchdog();
  // `phase` must be a string literal (kept by pointer).
  void beat(int64_t step, const char* phase);
  void beat(const char* phase);  // the same step
  // Runs on the watchdog's thread when it fires, before the process exits:
  // e.g. aborting the NCCL communicator, whose calls might otherwise hang.
  void on_timeout(std::function<void()> action);

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();

  const double timeout_;
  const int rank_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  int64_t step_ = 0;
  const char* phase_ = "start-up";
  std::function<void()> on_timeout_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace train
