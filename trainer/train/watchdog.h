// The watchdog: a thread that ends the job when this rank makes no progress,
// or when its communicator learns that a peer failed.
//
// The training loop calls beat(step, phase) as it enters each phase (data,
// forward/backward, allreduce, update, the device's work: waiting for a queued
// step to finish, the interval log's allgather, the replica check, validation,
// checkpoint); when one phase lasts longer than the timeout — a collective
// whose peer died or hung, a stuck file system — the rank logs which step and
// phase, on which host, and exits with kExitWatchdog. About once a second it
// also asks the watched communicator for an asynchronous error (NCCL: a peer
// died, a network error), which the host would otherwise see only at its next
// collective or host wait: it exits at once, kExitFailed, with that error.
// Either way it prints the rank's last collectives
// (distributed/flight_recorder.h), aborts the communicator so that no
// collective hangs (bounded: an abort that has not returned after abort_grace
// seconds is left behind), and exits; mpirun or srun then ends the other ranks:
// no survivor waits forever. Those ranks, signalled (TERM) while they wait for
// the lost peer, end the same way once they have waited dist.peer_lost_after_s
// (survivor_save.h). Before the exit, one survivor saves the last step every
// rank completed (SurvivorSave::save, bounded by the timeout, or 10 minutes
// without one).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "trainer/distributed/communicator.h"
#include "trainer/distributed/flight_recorder.h"
#include "trainer/train/survivor_save.h"

namespace train {

class Watchdog {
 public:
  // timeout 0: no timeout (the communicator is still watched); rank -1: not
  // known yet; `setting`: where the timeout was set (a string literal), named
  // when it fires.
  Watchdog(double timeout_seconds, int rank, double abort_grace_seconds = 10,
           const char* setting = "train.watchdog_s");
  ~Watchdog();
  // `phase` must be a string literal (kept by pointer).
  void beat(int64_t step, const char* phase);
  void beat(const char* phase);  // the same step
  // For its lifetime: `comm`'s asynchronous error polled, `comm` aborted and
  // `recorder`'s ring printed when the watchdog fires, and `survivor` asked
  // whether a peer is lost and to save before the exit. Make it a member
  // declared after the communicator and recorder: the watchdog then lets go of
  // them before they are destroyed, also when a later member's construction
  // throws (a destructor's body would not run then).
  class Watching {
   public:
    Watching(Watchdog& watchdog, distributed::Communicator* comm,
             const distributed::FlightRecorder* recorder, SurvivorSave* survivor = nullptr);
    ~Watching();
    Watching(const Watching&) = delete;
    Watching& operator=(const Watching&) = delete;

   private:
    Watchdog& watchdog_;
  };

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(distributed::Communicator* comm, const distributed::FlightRecorder* recorder,
             SurvivorSave* survivor);
  void run();
  // Why the job must end now ("" while it need not), and its exit code.
  std::string due(int* code);
  [[noreturn]] void end_job(int code, const std::string& why, std::unique_lock<std::mutex>& lock);
  std::string rank_on_host() const;

  const double timeout_;
  const int rank_;
  const double abort_grace_;
  const char* const setting_;
  const std::string host_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  bool ending_ = false;  // end_job() under way: watch() waits for the exit
  int64_t step_ = 0;
  const char* phase_ = "start-up";
  distributed::Communicator* comm_ = nullptr;
  const distributed::FlightRecorder* recorder_ = nullptr;
  SurvivorSave* survivor_ = nullptr;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace train
