// One trainer per run directory: rank 0 holds a lock on <run>/.lock for the
// job's life (base/holder_lock.h), taken before it writes anything there.
// A second trainer on the same run directory (a job resubmitted while its
// requeued twin is pending, two users on one name) is refused, naming the
// holder: its host, PID, Slurm job and start time. Readers beside training
// never take it (evaluate --watch takes its own, one per run and split).
#pragma once
#include <string>

#include "base/holder_lock.h"

namespace train {

class RunLock {
 public:
  // Throws std::runtime_error naming the directory and the holder when
  // another process holds the lock.
  explicit RunLock(const std::string& run_dir);

 private:
  static base::HolderLock take(const std::string& run_dir);
  base::HolderLock lock_;
};

}  // namespace train
