#include "launch/file_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace launch {

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
  if (error == 0 && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(tmp.c_str());
    fail(path, error);
  }
}

void check_written(std::ostream& out, const std::filesystem::path& path) {
  const int error = errno;  // the failed write's, when the stream failed
  if (!out.flush()) fail(path, error != 0 ? error : errno);
}

}  // namespace launch
