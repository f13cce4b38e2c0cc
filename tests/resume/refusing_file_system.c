// LD_PRELOAD'ed by refusing_file_system.sh: a file system that refuses locks
// (NOLOCK=1: fcntl and flock locks fail with ENOLCK, as on NFS without lockd
// or Lustre without -o flock) and fsync (FSYNC_ERRNO=<errno>: 22 EINVAL as
// where it is not offered, 5 EIO as on a failing disk), of every file or only
// of those whose path contains FSYNC_PATH.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static int refused_lock(int cmd) {
  return getenv("NOLOCK") &&
         (cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW);
}

#define FCNTL(name)                                                    \
  int name(int fd, int cmd, ...) {                                     \
    va_list args;                                                      \
    va_start(args, cmd);                                               \
    void* arg = va_arg(args, void*);                                   \
    va_end(args);                                                      \
    if (refused_lock(cmd)) {                                           \
      errno = ENOLCK;                                                  \
      return -1;                                                       \
    }                                                                  \
    static int (*real)(int, int, ...);                                 \
    if (!real) real = (int (*)(int, int, ...))dlsym(RTLD_NEXT, #name); \
    return real(fd, cmd, arg);                                         \
  }
FCNTL(fcntl)
FCNTL(fcntl64)

int flock(int fd, int operation) {
  if (getenv("NOLOCK")) {
    errno = ENOLCK;
    return -1;
  }
  static int (*real)(int, int);
  if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
  return real(fd, operation);
}

static int sync_error(int fd) {
  const char* error = getenv("FSYNC_ERRNO");
  const char* only = getenv("FSYNC_PATH");
  if (!error) return 0;
  if (only) {
    char link[64], path[4096] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0 || !strstr(path, only)) return 0;
  }
  return atoi(error);
}

#define SYNC(name)                                           \
  int name(int fd) {                                         \
    if (sync_error(fd)) {                                    \
      errno = sync_error(fd);                                \
      return -1;                                             \
    }                                                        \
    static int (*real)(int);                                 \
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, #name); \
    return real(fd);                                         \
  }
SYNC(fsync)
SYNC(fdatasync)
