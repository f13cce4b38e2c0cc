// One holder at a time of something on a shared file system (a run directory,
// a run's watch table): an exclusive lock on a file for the holder's life,
// with the holder's identity written into the file — its host, PID, Slurm
// job and start time — so that a refused second one can say who holds it.
//
// The lock is POSIX's record lock (fcntl F_SETLK on the whole file), the one
// shared file systems implement across nodes: NFSv3 (through lockd), NFSv4
// (in the protocol), GPFS, BeeGFS, Lustre mounted with -o flock. Where the
// file system does not honour it (Lustre's localflock, a mount without
// locking), ENOLCK or EOPNOTSUPP is reported as a warning and the holder goes
// on unguarded. The kernel (or the NFS server, when the client's lease
// expires) releases it when the holder dies: a crashed or killed job leaves
// nothing to clear by hand.
#pragma once
#include <stdexcept>
#include <string>

namespace base {

class HolderLock {
 public:
  // Another process holds the lock: what it wrote of itself ("holder
  // unknown" if nothing).
  struct Held : std::runtime_error {
    Held(const std::string& path, std::string holder);
    std::string holder;
  };

  // Takes the lock on `path` (created if missing). Throws Held when another
  // process holds it, std::runtime_error when the file cannot be opened;
  // `unguarded` ends the warning logged where locks are not honoured ("a
  // second trainer on this run directory would not be detected").
  HolderLock(const std::string& path, const std::string& unguarded);
  ~HolderLock();  // closing the file releases the lock

  HolderLock(const HolderLock&) = delete;
  HolderLock& operator=(const HolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace base
