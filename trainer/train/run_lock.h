// One trainer per run directory: rank 0 holds a lock on <run>/.lock for the
// job's life, taken before it writes anything there. A second trainer on the
// same run directory (a job resubmitted while its requeued twin is pending,
// two users on one name) is refused, naming the holder: its host, PID, Slurm
// job and start time, which the holder wrote into the file.
//
// The lock is POSIX's record lock (fcntl F_SETLK on the whole file), the one
// shared file systems implement across nodes: NFSv3 (through lockd), NFSv4
// (in the protocol), GPFS, BeeGFS, Lustre mounted with -o flock. It assumes
// the file system honours it; where it does not (Lustre's localflock, a
// mount without locking), ENOLCK or EOPNOTSUPP is reported as a warning and
// training goes on unguarded. The kernel (or the NFS server, when the
// client's lease expires) releases it when the holder dies: a crashed or
// killed job leaves nothing to clear by hand. Readers beside training
// (evaluate --watch) never take it.
#pragma once
#include <string>

namespace train {

class RunLock {
 public:
  // Throws std::runtime_error naming the directory and the holder when
  // another process holds the lock.
  explicit RunLock(const std::string& run_dir);
  ~RunLock();  // closing the file releases the lock

  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace train
