#include "trainer/train/run_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "launch/logging.h"
#include "launch/utc_time.h"

namespace train {

namespace {

std::string holder_line() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const char* job = std::getenv("SLURM_JOB_ID");
  return std::string("host ") + host + ", PID " + std::to_string(getpid()) + ", Slurm job " +
         (job != nullptr ? job : "none") + ", since " + launch::utc_now();
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

RunLock::RunLock(const std::string& run_dir) {
  const std::string path = (std::filesystem::path(run_dir) / ".lock").string();
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot open the run's lock file " + path + ": " +
                             std::strerror(errno));
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  if (fcntl(fd_, F_SETLK, &whole) != 0) {
    const int error = errno;
    if (error == EACCES || error == EAGAIN) {
      const std::string holder = read_all(fd_);
      close(fd_);
      fd_ = -1;
      throw std::runtime_error(
          "the run directory " + run_dir + " is in use by another trainer (" +
          (holder.empty() ? std::string("holder unknown") : holder) +
          "): wait for it to end, stop it, or give this run another --run.name");
    }
    logging::warn(
        "cannot lock {} ({}): this file system does not honour POSIX locks; a second "
        "trainer on this run directory would not be detected",
        path, std::strerror(error));
    return;
  }
  const std::string line = holder_line() + "\n";
  if (ftruncate(fd_, 0) != 0 ||
      pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    logging::warn("cannot write the lock holder into {}: {}", path, std::strerror(errno));
}

RunLock::~RunLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace train
