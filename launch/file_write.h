// The files a job writes (configs, logs, markers, checkpoints' metadata,
// results, dataset manifests), written whole or not at all, and every failure
// an error naming the file and the system's reason ("No space left on
// device", "Read-only file system", "Permission denied"): nothing is left
// behind looking valid, nothing earlier is lost.
#pragma once
#include <filesystem>
#include <ostream>
#include <string_view>

namespace launch {

// `bytes` into `path`: written to a temporary file beside it, fsynced, and
// renamed over `path` (the old file, if any, stays until then). Throws
// std::runtime_error("cannot write <path>: <reason>"); the temporary is removed.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// After writing to `out`, a stream appending to `path` (a log): throws
// std::runtime_error("cannot write <path>: <reason>") if the stream failed.
void check_written(std::ostream& out, const std::filesystem::path& path);

}  // namespace launch
