// LD_PRELOAD'ed by startup_io_bench.sh: counts, per trainer process, the
// files it opens and the bytes it reads from them, for the file-system
// traffic of a start-up and a resume (issue 57).
//
// A file is counted when its path (as /proc/self/fd names it once open, so
// relative paths and openat's directories resolve) lies under one of the
// colon-separated prefixes of IO_COUNT_PATHS (default: IO_COUNT_DATA and
// IO_COUNT_CKPT); it is a dataset file under IO_COUNT_DATA, a checkpoint
// file under IO_COUNT_CKPT, else "other". Only regular files (no
// directories). Opens: open, open64, openat, openat64 (and their fortified
// __*_2 forms), fopen, fopen64 — the shards are opened by HDF5's sec2 driver
// (open), std::ifstream opens with fopen. Bytes: read, pread, pread64,
// readv, preadv (and __read_chk, __pread*_chk), fread — HDF5 reads with
// pread64, std::ifstream with read. Not seen: mmap'ed reads, stat calls.
// An fd's category lives in a table (fds below 65536), set at the open,
// copied by dup, cleared by close and fclose; the counters are atomics.
//
// Only a process whose argv[0] is named `trainer` counts (not mpirun, orted,
// bash, env); at its exit (a destructor: not after _exit or a kill) it writes
// one line to $IO_COUNT_DIR/<pid>.txt:
//   pid rank data_opens data_bytes ckpt_opens ckpt_bytes other_opens other_bytes
//       main_data_opens main_data_bytes read_data_files host
// rank: OMPI_COMM_WORLD_RANK, else PMIX_RANK, else -1. main_data_*: the share
// of data_* done on the main thread (the set-up: manifest, index, the shard
// checks; the batches come from a prefetch thread). read_data_files: distinct
// dataset files (by device and inode) opened off the main thread — the files
// the batches were read from. host: gethostname (a simulated node's own).
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { kNone, kData, kCkpt, kOther, kCategories };
#define MAX_FD 65536
#define MAX_PREFIXES 32
#define FILE_SLOTS 65536  // distinct data files remembered (a power of two)

static int enabled;
static pid_t main_pid;
static _Atomic unsigned char category[MAX_FD];
static atomic_uint_fast64_t opens[kCategories], bytes[kCategories];
static atomic_uint_fast64_t main_data_opens, main_data_bytes, read_data_files;
static atomic_uint_fast64_t file_slots[FILE_SLOTS];

static char data_prefix[PATH_MAX], ckpt_prefix[PATH_MAX];
static char prefixes[MAX_PREFIXES][PATH_MAX];
static int num_prefixes;

#define REAL(ret, name, ...)              \
  static ret (*real_##name)(__VA_ARGS__); \
  if (!real_##name) real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

// <path> under directory <prefix> (the prefix itself, or prefix + '/' + ...).
static int under(const char* path, const char* prefix) {
  const size_t n = strlen(prefix);
  if (n == 0 || strncmp(path, prefix, n) != 0) return 0;
  return path[n] == '\0' || path[n] == '/' || prefix[n - 1] == '/';
}

static int on_main_thread(void) { return (pid_t)syscall(SYS_gettid) == main_pid; }

// Remembers the file (device, inode); 1 when it was new.
static int first_time(const struct stat* st) {
  const uint64_t key = ((uint64_t)st->st_ino ^ ((uint64_t)st->st_dev << 40)) | 1;
  uint64_t slot = (key * 0x9E3779B97F4A7C15ull) >> 48;
  for (int probe = 0; probe < FILE_SLOTS; ++probe, slot = (slot + 1) & (FILE_SLOTS - 1)) {
    uint_fast64_t seen = atomic_load(&file_slots[slot]);
    if (seen == key) return 0;
    if (seen == 0) {
      if (atomic_compare_exchange_strong(&file_slots[slot], &seen, key)) return 1;
      if (seen == key) return 0;
    }
  }
  return 0;  // full: no longer counted
}

// After an open that returned <fd>: its category, and the open counted.
static void opened(int fd) {
  if (!enabled || fd < 0 || fd >= MAX_FD) return;
  atomic_store(&category[fd], kNone);
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  int counted = 0;
  for (int i = 0; i < num_prefixes && !counted; ++i) counted = under(path, prefixes[i]);
  if (!counted) return;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const int which = under(path, data_prefix) ? kData : under(path, ckpt_prefix) ? kCkpt : kOther;
  atomic_store(&category[fd], which);
  atomic_fetch_add(&opens[which], 1);
  if (which == kData) {
    if (on_main_thread())
      atomic_fetch_add(&main_data_opens, 1);
    else if (first_time(&st))
      atomic_fetch_add(&read_data_files, 1);
  }
}

static void counted_read(int fd, ssize_t got) {
  if (!enabled || got <= 0 || fd < 0 || fd >= MAX_FD) return;
  const int which = atomic_load(&category[fd]);
  if (which == kNone) return;
  atomic_fetch_add(&bytes[which], (uint_fast64_t)got);
  if (which == kData && on_main_thread()) atomic_fetch_add(&main_data_bytes, (uint_fast64_t)got);
}

static void forget(int fd) {
  if (fd >= 0 && fd < MAX_FD) atomic_store(&category[fd], kNone);
}

static void copied(int from, int to) {
  if (to < 0 || to >= MAX_FD) return;
  atomic_store(&category[to], from >= 0 && from < MAX_FD ? atomic_load(&category[from]) : kNone);
}

// ---- opens ----
static int wants_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

// The mode, passed only with O_CREAT or O_TMPFILE, after <flags>.
#define TAKE_MODE(flags)         \
  mode_t mode = 0;               \
  if (wants_mode(flags)) {       \
    va_list args;                \
    va_start(args, flags);       \
    mode = va_arg(args, mode_t); \
    va_end(args);                \
  }

#define OPEN(name)                                 \
  int name(const char* path, int flags, ...) {     \
    TAKE_MODE(flags)                               \
    REAL(int, name, const char*, int, ...);        \
    const int fd = real_##name(path, flags, mode); \
    opened(fd);                                    \
    return fd;                                     \
  }
OPEN(open)
OPEN(open64)

#define OPENAT(name)                                    \
  int name(int dir, const char* path, int flags, ...) { \
    TAKE_MODE(flags)                                    \
    REAL(int, name, int, const char*, int, ...);        \
    const int fd = real_##name(dir, path, flags, mode); \
    opened(fd);                                         \
    return fd;                                          \
  }
OPENAT(openat)
OPENAT(openat64)

// The fortified forms (_FORTIFY_SOURCE, an open without a mode).
#define OPEN_2(name)                         \
  int name(const char* path, int flags) {    \
    REAL(int, name, const char*, int);       \
    const int fd = real_##name(path, flags); \
    opened(fd);                              \
    return fd;                               \
  }
int __open_2(const char*, int);
int __open64_2(const char*, int);
OPEN_2(__open_2)
OPEN_2(__open64_2)
#define OPENAT_2(name)                             \
  int name(int dir, const char* path, int flags) { \
    REAL(int, name, int, const char*, int);        \
    const int fd = real_##name(dir, path, flags);  \
    opened(fd);                                    \
    return fd;                                     \
  }
int __openat_2(int, const char*, int);
int __openat64_2(int, const char*, int);
OPENAT_2(__openat_2)
OPENAT_2(__openat64_2)

#define FOPEN(name)                               \
  FILE* name(const char* path, const char* how) { \
    REAL(FILE*, name, const char*, const char*);  \
    FILE* file = real_##name(path, how);          \
    if (file) opened(fileno(file));               \
    return file;                                  \
  }
FOPEN(fopen)
FOPEN(fopen64)

// ---- closes and copies ----
int close(int fd) {
  forget(fd);
  REAL(int, close, int);
  return real_close(fd);
}

int fclose(FILE* file) {
  if (file) forget(fileno(file));
  REAL(int, fclose, FILE*);
  return real_fclose(file);
}

int dup(int fd) {
  REAL(int, dup, int);
  const int copy = real_dup(fd);
  if (copy >= 0) copied(fd, copy);
  return copy;
}

int dup2(int fd, int to) {
  REAL(int, dup2, int, int);
  const int copy = real_dup2(fd, to);
  if (copy >= 0) copied(fd, copy);
  return copy;
}

int dup3(int fd, int to, int flags) {
  REAL(int, dup3, int, int, int);
  const int copy = real_dup3(fd, to, flags);
  if (copy >= 0) copied(fd, copy);
  return copy;
}

// ---- reads ----
ssize_t read(int fd, void* buffer, size_t n) {
  REAL(ssize_t, read, int, void*, size_t);
  const ssize_t got = real_read(fd, buffer, n);
  counted_read(fd, got);
  return got;
}

#define PREAD(name, offset_t)                                     \
  ssize_t name(int fd, void* buffer, size_t n, offset_t offset) { \
    REAL(ssize_t, name, int, void*, size_t, offset_t);            \
    const ssize_t got = real_##name(fd, buffer, n, offset);       \
    counted_read(fd, got);                                        \
    return got;                                                   \
  }
PREAD(pread, off_t)
PREAD(pread64, off64_t)

ssize_t readv(int fd, const struct iovec* v, int count) {
  REAL(ssize_t, readv, int, const struct iovec*, int);
  const ssize_t got = real_readv(fd, v, count);
  counted_read(fd, got);
  return got;
}

#define PREADV(name, offset_t)                                              \
  ssize_t name(int fd, const struct iovec* v, int count, offset_t offset) { \
    REAL(ssize_t, name, int, const struct iovec*, int, offset_t);           \
    const ssize_t got = real_##name(fd, v, count, offset);                  \
    counted_read(fd, got);                                                  \
    return got;                                                             \
  }
PREADV(preadv, off_t)
PREADV(preadv64, off64_t)

ssize_t __read_chk(int, void*, size_t, size_t);
ssize_t __read_chk(int fd, void* buffer, size_t n, size_t size) {
  REAL(ssize_t, __read_chk, int, void*, size_t, size_t);
  const ssize_t got = real___read_chk(fd, buffer, n, size);
  counted_read(fd, got);
  return got;
}

#define PREAD_CHK(name, offset_t)                                              \
  ssize_t name(int, void*, size_t, offset_t, size_t);                          \
  ssize_t name(int fd, void* buffer, size_t n, offset_t offset, size_t size) { \
    REAL(ssize_t, name, int, void*, size_t, offset_t, size_t);                 \
    const ssize_t got = real_##name(fd, buffer, n, offset, size);              \
    counted_read(fd, got);                                                     \
    return got;                                                                \
  }
PREAD_CHK(__pread_chk, off_t)
PREAD_CHK(__pread64_chk, off64_t)

// stdio reads with its own internal read (not the one above): counted here.
size_t fread(void* buffer, size_t size, size_t n, FILE* file) {
  REAL(size_t, fread, void*, size_t, size_t, FILE*);
  const size_t got = real_fread(buffer, size, n, file);
  if (file) counted_read(fileno(file), (ssize_t)(got * size));
  return got;
}

// ---- start and exit ----
static void copy_path(char* out, const char* in) {
  snprintf(out, PATH_MAX, "%s", in ? in : "");
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
}

__attribute__((constructor)) static void start(void) {
  char args[4096] = "";
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = read(fd, args, sizeof args - 1);
  close(fd);
  if (n <= 0) return;
  args[n] = '\0';  // argv[0] ends at its own NUL
  const char* slash = strrchr(args, '/');
  if (strcmp(slash ? slash + 1 : args, "trainer") != 0) return;
  if (!getenv("IO_COUNT_DIR")) return;
  copy_path(data_prefix, getenv("IO_COUNT_DATA"));
  copy_path(ckpt_prefix, getenv("IO_COUNT_CKPT"));
  const char* listed = getenv("IO_COUNT_PATHS");
  char all[8192];
  snprintf(all, sizeof all, "%s", listed && *listed ? listed : "");
  if (!*all) snprintf(all, sizeof all, "%s:%s", data_prefix, ckpt_prefix);
  for (char *save = NULL, *p = strtok_r(all, ":", &save); p && num_prefixes < MAX_PREFIXES;
       p = strtok_r(NULL, ":", &save))
    if (*p) copy_path(prefixes[num_prefixes++], p);
  main_pid = getpid();
  enabled = 1;
}

__attribute__((destructor)) static void finish(void) {
  if (!enabled || getpid() != main_pid) return;  // a forked child has the parent's counts
  enabled = 0;
  const char* rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!rank) rank = getenv("PMIX_RANK");
  if (!rank) rank = "-1";
  char host[256] = "?";
  if (gethostname(host, sizeof host) != 0) strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  char file[PATH_MAX + 32], line[1024];
  snprintf(file, sizeof file, "%s/%d.txt", getenv("IO_COUNT_DIR"), (int)main_pid);
  const int n =
      snprintf(line, sizeof line, "%d %s %llu %llu %llu %llu %llu %llu %llu %llu %llu %s\n",
               (int)main_pid, rank, (unsigned long long)opens[kData],
               (unsigned long long)bytes[kData], (unsigned long long)opens[kCkpt],
               (unsigned long long)bytes[kCkpt], (unsigned long long)opens[kOther],
               (unsigned long long)bytes[kOther], (unsigned long long)main_data_opens,
               (unsigned long long)main_data_bytes, (unsigned long long)read_data_files, host);
  const int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) perror("io_counter: write");
  close(fd);
}
