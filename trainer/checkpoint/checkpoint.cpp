#include "trainer/checkpoint/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "base/file_write.h"
#include "base/host_name.h"
#include "base/logging.h"
#include "base/utc_time.h"
#include "data_pipeline/sha256.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"

namespace checkpoint {

namespace fs = std::filesystem;

namespace {

std::string step_name(int64_t step) {
  std::ostringstream name;
  name << "step_" << std::setw(8) << std::setfill('0') << step;
  return name.str();
}

// Flushes a file's or directory's contents to disk (base::sync_to_disk).
void fsync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot open " + path.string() +
                             " to fsync it: " + std::strerror(errno));
  try {
    base::sync_to_disk(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace

Checkpoints::Checkpoints(std::string run_dir, int64_t keep_last)
    : dir_((fs::path(run_dir) / "checkpoints").string()),
      keep_last_(std::max<int64_t>(1, keep_last)) {}

std::string Checkpoints::save(const Snapshot& snapshot) const {
  const std::string tmp = begin_save(snapshot.step);
  try {
    return commit(snapshot.step, tmp, write_part(snapshot, tmp));
  } catch (...) {
    abandon(tmp);
    throw;
  }
}

template <typename Body>
auto Checkpoints::naming_the_save(int64_t step, Body&& body) const {
  try {
    return body();
  } catch (const std::exception& e) {
    throw std::runtime_error(
        "saving the checkpoint of step " + std::to_string(step) + " in " + dir_ + " failed (" +
        (list().empty() ? "there is no earlier checkpoint" : "earlier checkpoints are untouched") +
        "): " + e.what());
  }
}

// The name holds the process and a count: a leftover of a crashed job (which
// a reader's open file may keep from removal, or a rank of that job still
// shutting down may write into) is never the directory of a later save.
std::string Checkpoints::begin_save(int64_t step) const {
  static std::atomic<int> saves{0};
  const fs::path tmp =
      fs::path(dir_) / (".tmp-" + step_name(step) + "-" + std::to_string(::getpid()) + "-" +
                        std::to_string(++saves));
  naming_the_save(step, [&] {
    base::make_directories(dir_, "the checkpoint directory");
    fs::create_directory(tmp);
  });
  return tmp.string();
}

std::string Checkpoints::write_part(const Snapshot& snapshot, const std::string& tmp_dir) const {
  return naming_the_save(snapshot.step, [&] {
    const fs::path tmp(tmp_dir);
    const CheckpointPart& part = snapshot.part;
    std::vector<std::string> written;
    if (!part.model.empty()) {
      save_tensors(part.model, (tmp / "model.pt").string());
      written.push_back("model.pt");
    }
    if (!part.optimizer.name.empty()) {
      save_tensors(part.optimizer.tensors, (tmp / part.optimizer.name).string());
      written.push_back(part.optimizer.name);
    }
    if (!part.state.is_null()) {
      base::write_file(tmp / "state.json", part.state.dump(2) + "\n");
      written.push_back("state.json");
    }
    std::string sums;
    for (const auto& file : written) {
      fsync_path(tmp / file);
      sums += data::sha256_file(tmp / file) + "  " + file + "\n";
    }
    // This rank's entries too: on some parallel file systems rank 0's
    // fsync of the directory does not cover what other clients created.
    fsync_path(tmp);
    return sums;
  });
}

std::string Checkpoints::commit(int64_t step, const std::string& tmp_dir,
                                const std::string& sums, bool best) const {
  const fs::path final_dir = fs::path(dir_) / step_name(step);
  naming_the_save(step, [&] {
    const fs::path tmp(tmp_dir);
    base::write_file(tmp / "SHA256SUMS", sums);
    fsync_path(tmp / "SHA256SUMS");
    fsync_path(tmp);
    if (fs::exists(final_dir)) remove_checkpoint(final_dir);  // the same step saved again
    fs::rename(tmp, final_dir);
    // Never back: one survivor of a lost peer may have saved a later step
    // meanwhile (train/survivor_save.h) beside rank 0's commit in flight.
    if (latest_step() <= step) point_link("latest", final_dir);
    if (best) point_link("best", final_dir);
  });

  // Prune all but the newest keep_last and the best: the newest counted
  // whether or not one of them is the best, so that a run whose latest is its
  // best keeps keep_last checkpoints, not one more that is neither.
  const std::string best_dir = resolve_link("best");
  const auto all = list();
  for (size_t i = 0; i + keep_last_ < all.size(); ++i)
    if (all[i] != best_dir) remove_checkpoint(all[i]);
  return final_dir.string();
}

void Checkpoints::abandon(const std::string& tmp) const {
  std::error_code ignored;
  fs::remove_all(tmp, ignored);
}

// Out of sight in one rename, then deleted: a reader (evaluate --watch)
// finds a checkpoint whole or not at all — never a directory whose files are
// vanishing one by one, which would fail verification halfway. What a crash
// leaves behind is a dot directory, which remove_temporaries() clears.
// The delete is best effort: a reader may hold a file open (on NFS, its
// unlinked file lives on as .nfsXXXX and the directory cannot go), and the
// new checkpoint is saved and linked already. What stays is a dot directory
// of a name no later removal reuses, cleared by remove_temporaries().
void Checkpoints::remove_checkpoint(const fs::path& checkpoint_dir) const {
  static std::atomic<int> removals{0};  // a background save prunes too
  const fs::path doomed =
      fs::path(dir_) / (".removing-" + checkpoint_dir.filename().string() + "-" +
                        std::to_string(::getpid()) + "-" + std::to_string(++removals));
  fs::rename(checkpoint_dir, doomed);
  remove_leftover(doomed);
}

void Checkpoints::remove_leftover(const fs::path& dir) {
  std::error_code error;
  fs::remove_all(dir, error);
  if (error)
    logging::warn(
        "cannot remove {} yet ({}): a reader may still hold one of its files; the next "
        "start removes it",
        dir.string(), error.message());
}

void Checkpoints::mark_best(const std::string& checkpoint_dir) const {
  point_link("best", checkpoint_dir);
}

void Checkpoints::remove_temporaries() const {
  if (!fs::is_directory(dir_)) return;
  for (const auto& entry : fs::directory_iterator(dir_))
    if (entry.path().filename().string().rfind(".", 0) == 0) remove_leftover(entry.path());
}

std::string Checkpoints::set_aside_after(int64_t step) const {
  const std::string kept = step >= 0 ? path_of(step) : "";
  std::vector<std::string> later;
  for (const auto& dir : list())
    if (dir > kept) later.push_back(dir);  // zero-padded step names sort in step order
  if (later.empty()) return "";
  const fs::path aside = fs::path(dir_).parent_path() / "superseded" / base::utc_now_for_path();
  base::make_directories(aside, "the folder for superseded checkpoints");
  const std::string best = resolve_link("best");
  for (const auto& dir : later) {
    if (dir == best) fs::remove(fs::path(dir_) / "best");
    fs::rename(dir, aside / fs::path(dir).filename());
  }
  if (kept.empty())
    fs::remove(fs::path(dir_) / "latest");
  else
    point_link("latest", kept);
  fsync_path(dir_);
  return aside.string();
}

// <dir>/<name> -> target's directory name, swapped in with one rename.
int64_t Checkpoints::latest_step() const {
  std::error_code error;
  const std::string name = fs::read_symlink(fs::path(dir_) / "latest", error).filename().string();
  if (error || name.rfind("step_", 0) != 0) return -1;
  return std::stoll(name.substr(5));
}

// The temporary link's name holds the host and process: ranks on two nodes
// (rank 0's commit, a survivor's save) may share a process id.
void Checkpoints::point_link(const std::string& name, const fs::path& target) const {
  const fs::path link_tmp =
      fs::path(dir_) / ("." + name + "-" + base::host_name() + "-" + std::to_string(::getpid()));
  fs::remove(link_tmp);
  fs::create_directory_symlink(target.filename(), link_tmp);
  fs::rename(link_tmp, fs::path(dir_) / name);
  fsync_path(dir_);
}

// The canonical directory <dir>/<name> points to, "" when there is none.
std::string Checkpoints::resolve_link(const std::string& name) const {
  std::error_code error;
  const fs::path target = fs::canonical(fs::path(dir_) / name, error);
  return error ? "" : target.string();
}

std::string Checkpoints::path_of(int64_t step) const {
  return fs::weakly_canonical(fs::path(dir_) / step_name(step)).string();
}

std::vector<std::string> Checkpoints::list() const {
  std::vector<std::string> found;
  if (!fs::is_directory(dir_)) return found;
  std::error_code error;
  const fs::path dir = fs::canonical(dir_, error);
  if (error) return found;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    // The type as the listing gave it, without another look: a checkpoint
    // pruned (renamed) since the listing is simply one more name that goes.
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(error) && !entry.is_symlink(error) && name.rfind("step_", 0) == 0)
      found.push_back((dir / name).string());
  }
  std::sort(found.begin(), found.end());  // zero-padded step numbers sort in order
  return found;
}

std::string Checkpoints::resolve(const CheckpointChoice& choice) const {
  if (choice.kind == CheckpointChoice::Kind::kNone)
    throw std::logic_error("a fresh start resolves to no checkpoint");
  const std::string which = choice.text();
  if (choice.of_run()) {
    // A link whose target went between reading the link and reaching the
    // directory (a run saving and pruning every few milliseconds) points
    // elsewhere by now: read it again.
    std::string target = resolve_link(which);
    for (int again = 0; target.empty() && again < 100 && fs::is_symlink(fs::path(dir_) / which);
         ++again)
      target = resolve_link(which);
    if (target.empty())
      throw std::runtime_error("no " + which + " checkpoint: " + (fs::path(dir_) / which).string() +
                               " does not exist" +
                               (choice.kind == CheckpointChoice::Kind::kBest
                                    ? " (the best is marked by validation: train.valid_every > 0)"
                                    : " (the run has saved no checkpoint yet)"));
    return target;
  }
  const std::string example = (fs::path(dir_) / "step_00001000").string();
  if (fs::exists(which) && !fs::is_directory(which))
    throw std::runtime_error(which +
                             " is a file, not a checkpoint directory (one holds model.pt, "
                             "optimizer.pt or parts, state.json and SHA256SUMS, e.g. " +
                             example + ")");
  if (!fs::is_directory(which))
    throw std::runtime_error("checkpoint directory " + which +
                             " does not exist (give latest, best or a directory such as " +
                             example + ")");
  return which;
}

nlohmann::json parse_checkpoint_state(const std::vector<char>& bytes, const std::string& path) {
  try {
    return nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace checkpoint
