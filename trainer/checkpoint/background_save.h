// Checkpoints written by a background thread while training goes on, one at
// a time (as torchtitan's async checkpointing and PyTorch DCP's async_save):
//
//   saver.save(take_snapshot(...), best)   returns once the previous write is
//                                          done and this one has started
//   saver.wait()                           the write in flight, done; throws
//                                          what it threw
//
// The directory is written as Checkpoints::save writes it (checksums, fsync,
// atomic rename, `latest` moved last, pruning), so a failed write leaves the
// previous checkpoint the `latest`, and its error names the step and the
// directory. The caller waits before the next save, before a preemption's
// exit and at the end of training; the destructor waits too (a failure then
// is logged, as the caller is failing already).
#pragma once
#include <future>
#include <string>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"

namespace checkpoint {

class BackgroundSave {
 public:
  explicit BackgroundSave(const Checkpoints& checkpoints) : checkpoints_(checkpoints) {}
  ~BackgroundSave();

  // Waits for the write in flight (throwing its error), then starts writing
  // `snapshot`, marked best when `best`.
  void save(Snapshot snapshot, bool best);
  void wait();

  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

 private:
  const Checkpoints& checkpoints_;
  std::future<void> writing_;  // invalid when none is in flight
};

}  // namespace checkpoint
