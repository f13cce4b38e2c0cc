// LD_PRELOAD'ed by refusing_file_system.sh: a file system that refuses locks
// (NOLOCK=1: fcntl and flock locks fail with ENOLCK, as on NFS without lockd
// or Lustre without -o flock) and fsync (FSYNC_ERRNO=<errno>: 22 EINVAL as
// where it is not offered, 5 EIO as on a failing disk).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
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

static int sync_error(void) {
  const char* error = getenv("FSYNC_ERRNO");
  return error ? atoi(error) : 0;
}

#define SYNC(name)                                           \
  int name(int fd) {                                         \
    if (sync_error()) {                                      \
      errno = sync_error();                                  \
      return -1;                                             \
    }                                                        \
    static int (*real)(int);                                 \
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, #name); \
    return real(fd);                                         \
  }
SYNC(fsync)
SYNC(fdatasync)
