// The files a job writes (configs, logs, markers, checkpoints' metadata,
// results, dataset manifests), written whole or not at all, and every failure
// an error naming the file and the system's reason ("No space left on
// device", "Read-only file system", "Permission denied"): nothing is left
// behind looking valid, nothing earlier is lost.
#pragma once
#include <filesystem>
#include <ostream>
#include <string_view>

namespace base {

// `bytes` into `path`: written to a temporary file beside it, fsynced, and
// renamed over `path` (the old file, if any, stays until then). Throws
// std::runtime_error("cannot write <path>: <reason>"); the temporary is removed.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// Flushes what was written through `fd` (a file or directory at `path`) to
// disk. Where the file system offers no fsync (EINVAL, ENOTSUP, ENOSYS: some
// FUSE, SMB and object-store mounts, and directories on several network file
// systems) it warns once per process and goes on: the data is written, only
// its durability across a crash of the node is not promised. Any other
// failure (EIO, ENOSPC, EDQUOT: the data may be lost) throws
// std::runtime_error("cannot write <path>: fsync: <reason>").
void sync_to_disk(int fd, const std::filesystem::path& path);

// `dir` and the folders above it, made where missing. Throws
// std::runtime_error("cannot create <what> <dir>: <reason>").
void make_directories(const std::filesystem::path& dir, std::string_view what);

// After writing to `out`, a stream appending to `path` (a log): throws
// std::runtime_error("cannot write <path>: <reason>") if the stream failed.
void check_written(std::ostream& out, const std::filesystem::path& path);

}  // namespace base
