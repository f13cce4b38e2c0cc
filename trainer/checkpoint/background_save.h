// Checkpoints written by a background thread while training goes on, one at
// a time (as torchtitan's async checkpointing and PyTorch DCP's async_save):
//
//   saver.save(step, model, adam, state, best)   returns once the previous
//                          write is done, the snapshot taken (snapshot.h) and
//                          this write started
//   saver.wait()           the write in flight, done; throws what it threw
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

  // Waits for the write in flight (throwing its error), takes the snapshot
  // of `model` and `adam` into the buffers the previous one used, then
  // starts writing it, marked best when `best`.
  void save(int64_t step, const torch::nn::Module& model, torch::optim::Adam& adam,
            nlohmann::json state, bool best);
  void wait();

  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

 private:
  const Checkpoints& checkpoints_;
  Snapshot snapshot_;          // read by the write in flight, refilled once it is done
  std::future<void> writing_;  // invalid when none is in flight
};

}  // namespace checkpoint
