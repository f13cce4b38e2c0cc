#include "base/file_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "base/logging.h"

namespace base {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, int error) {
  throw std::runtime_error("cannot write " + path.string() + ": " +
                           (error != 0 ? std::strerror(error) : "the write failed"));
}

}  // namespace

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  const std::string tmp = path.string() + ".tmp-" + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, errno);
  int error = 0;
  for (size_t done = 0; done < bytes.size() && error == 0;) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  try {
    if (error == 0) sync_to_disk(fd, path);
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(tmp.c_str());
    fail(path, error);
  }
}

void sync_to_disk(int fd, const std::filesystem::path& path) {
  int result;
  do {  // a preemption signal (handled without SA_RESTART) may interrupt it on FUSE or CIFS
    result = fsync(fd);
  } while (result != 0 && errno == EINTR);
  if (result == 0) return;
  const int error = errno;
  if (error != EINVAL && error != ENOTSUP && error != ENOSYS)
    throw std::runtime_error("cannot write " + path.string() + ": fsync: " + std::strerror(error));
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    logging::warn(
        "the file system of {} offers no fsync ({}): files are written, but a crash of "
        "the node may lose the last of them",
        path.string(), std::strerror(error));
}

void check_written(std::ostream& out, const std::filesystem::path& path) {
  const int error = errno;  // the failed write's, when the stream failed
  if (!out.flush()) fail(path, error != 0 ? error : errno);
}

void make_directories(const std::filesystem::path& dir, std::string_view what) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    throw std::runtime_error("cannot create " + std::string(what) + " " + dir.string() + ": " +
                             error.message());
}

}  // namespace base
