#include "data_pipeline/prepare/output_directory.h"

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <system_error>

#include <sys/stat.h>

namespace data {

namespace fs = std::filesystem;

// A new directory "<out>.tmp-XXXXXX" of a name no other job uses (random,
// made with mkdir, which fails where the name exists). Not mkdtemp: its
// directory is 0700 whatever the umask, and the rename that publishes it
// keeps that, so a colleague's job could not read a shared dataset; mkdir
// gives the mode of any directory its user makes (0777 less the umask) and
// keeps the setgid bit of a project directory, whose group then owns the
// dataset's files.
std::string unique_directory_beside(const fs::path& out) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = out.string() + ".tmp-";
    for (int i = 0; i < 6; ++i) name += letters[entropy() % (sizeof(letters) - 1)];
    if (::mkdir(name.c_str(), 0777) == 0) return name;
    if (errno != EEXIST) {
      const int error = errno;
      throw std::runtime_error("cannot create a directory beside " + out.string() + ": " +
                               std::strerror(error));
    }
  }
  throw std::runtime_error("cannot create a directory beside " + out.string() +
                           ": 100 random names taken");
}

// "data/copy/" -> "data/copy": sibling paths like "<out>.tmp-XXXXXX" need a file name.
fs::path without_trailing_separator(const fs::path& out) {
  const fs::path normal = out.lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

void check_output(const fs::path& out, bool force) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) {
    throw std::runtime_error("output path " + out.string() + " exists and is not a directory");
  }
  if (!fs::is_empty(out) && !force) {
    throw std::runtime_error("output directory " + out.string() +
                             " exists and is not empty (pass --force to replace it)");
  }
}

// Renames the finished `temp` to `out`. Without --force, only onto nothing
// or an empty directory: rename(2) refuses a non-empty target atomically
// (ENOTEMPTY or EEXIST, on every POSIX file system, NFS and Lustre included),
// so of two prepare_data started on one --out (a Slurm array, a job
// submitted twice) the first to finish publishes and the other fails,
// instead of replacing a dataset a trainer may already read. With --force,
// an existing `out` is moved aside first, then removed.
void publish(const fs::path& temp, const fs::path& out, bool force) {
  if (!force || !fs::exists(out)) {
    std::error_code error;
    fs::rename(temp, out, error);
    if (error == std::errc::directory_not_empty || error == std::errc::file_exists)
      throw std::runtime_error("output directory " + out.string() +
                               " was filled by another prepare_data while this one ran: it is "
                               "left as that one wrote it, and this one's dataset is discarded" +
                               std::string(force ? "" : " (pass --force to replace it)"));
    if (error) throw fs::filesystem_error("cannot publish the dataset", temp, out, error);
    return;
  }
  const fs::path old = temp.string() + ".old";  // unique, as temp is
  fs::rename(out, old);
  fs::rename(temp, out);
  fs::remove_all(old);
}

}  // namespace data
