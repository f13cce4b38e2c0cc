#include "base/holder_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/host_name.h"
#include "base/logging.h"
#include "base/utc_time.h"

namespace base {

namespace {

std::string holder_line() {
  const std::string host = host_name();
  const char* job = std::getenv("SLURM_JOB_ID");
  return std::string("host ") + host + ", PID " + std::to_string(getpid()) + ", Slurm job " +
         (job != nullptr ? job : "none") + ", since " + utc_now();
}

std::string read_all(int fd) {
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = pread(fd, buffer, sizeof buffer, static_cast<off_t>(text.size()))) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

}  // namespace

HolderLock::Held::Held(const std::string& path, std::string who)
    : std::runtime_error(path + " is locked by " + (who.empty() ? "an unknown holder" : who)),
      holder(who.empty() ? "holder unknown" : std::move(who)) {}

HolderLock::HolderLock(const std::string& path, const std::string& unguarded) {
  // 0666: the umask decides, so that a group's project can share the file.
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the lock file " + path + ": " + std::strerror(errno));
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  if (fcntl(fd_, F_SETLK, &whole) != 0) {
    const int error = errno;
    if (error == EACCES || error == EAGAIN) {
      std::string holder = read_all(fd_);
      close(fd_);
      fd_ = -1;
      throw Held(path, std::move(holder));
    }
    logging::warn("cannot lock {} ({}): this file system does not honour POSIX locks; {}", path,
                  std::strerror(error), unguarded);
    return;
  }
  const std::string line = holder_line() + "\n";
  if (ftruncate(fd_, 0) != 0 ||
      pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    logging::warn("cannot write the lock holder into {}: {}", path, std::strerror(errno));
}

HolderLock::~HolderLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace base
