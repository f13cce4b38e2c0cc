#include "trainer/train/survivor_save.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/logging.h"
#include "base/seconds.h"
#include "base/text_format.h"

namespace train {

namespace fs = std::filesystem;

namespace {

// SIGCONT begins mpirun's end of a job (Open MPI 4.1's orted: CONT, then
// odls_base_sigkill_timeout seconds later TERM, as long again KILL; Slurm's
// step kill: CONT, TERM, KillWait, KILL): a survivor that hears it knows of
// the end a timeout earlier than by TERM. (A rank stopped and continued by
// hand hears it too; it ends the job only if it then waits for its peers
// dist.peer_lost_after_s.)
static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool> g_continued{false};
struct sigaction g_previous_cont;
extern "C" void on_continue(int) { g_continued = true; }

int64_t ticks(SurvivorSave::Clock::time_point t) { return t.time_since_epoch().count(); }

double seconds_between(int64_t from, int64_t to) {
  return std::chrono::duration<double>(SurvivorSave::Clock::duration(to - from)).count();
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? name : "(unknown host)";
}

// The step of the checkpoint `latest` names, -1 when there is none.
int64_t latest_step(const checkpoint::Checkpoints& checkpoints) {
  std::error_code error;
  const fs::path target = fs::read_symlink(fs::path(checkpoints.dir()) / "latest", error);
  const std::string name = target.filename().string();
  if (error || name.rfind("step_", 0) != 0) return -1;
  return std::stoll(name.substr(5));
}

}  // namespace

SurvivorSave::SurvivorSave(int rank, double peer_lost_after_s, const PreemptionSignals& signals)
    : rank_(rank),
      peer_lost_after_s_(peer_lost_after_s),
      signals_(signals) {
  g_continued = false;
  struct sigaction action {};
  action.sa_handler = on_continue;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGCONT, &action, &g_previous_cont);
}

SurvivorSave::~SurvivorSave() { sigaction(SIGCONT, &g_previous_cont, nullptr); }

SurvivorSave::Holding::Holding(SurvivorSave& save, Replica replica) : save_(save) {
  save_.replica_ = std::move(replica);
  save_.held_.lock();
  save_.holder_ = std::this_thread::get_id();
}

SurvivorSave::Holding::~Holding() {
  save_.holder_ = std::thread::id();
  save_.held_.unlock();
}

void SurvivorSave::waiting() {
  if (!is_holder()) return;  // before the loop, or another thread's wait
  waiting_since_ = ticks(Clock::now());
  held_.unlock();
}

void SurvivorSave::done_waiting() {
  if (!is_holder()) return;
  held_.lock();  // blocks for good while a survivor's save has the replica: the process exits
  waiting_since_ = 0;
}

std::string SurvivorSave::peer_lost(Clock::time_point now) {
  if (peer_lost_after_s_ <= 0 || !(signals_.requested() || g_continued)) return "";
  if (signal_seen_ == 0) signal_seen_ = ticks(now);
  const int64_t since = waiting_since_;
  if (since == 0) return "";  // not waiting for its peers
  // Counted from the later of the signal and the wait's beginning: a healthy
  // rank, signalled, finishes its wait once its peers reach the collective.
  const double stuck = seconds_between(std::max(since, signal_seen_), ticks(now));
  if (stuck < peer_lost_after_s_) return "";
  return text::format(
      "rank {} on {}: {} received, and waiting for its peers {:.0f} s after it "
      "(dist.peer_lost_after_s = {:g}): a peer is lost; ending the job",
      rank_, host_name(),
      signals_.requested() ? "signal " + std::to_string(signals_.signal()) : std::string("SIGCONT"),
      stuck, peer_lost_after_s_);
}

void SurvivorSave::save() {
  if (!unavailable_.empty()) {
    logging::warn("no survivor checkpoint: {}; a restart resumes from the last checkpoint",
                  unavailable_);
    return;
  }
  // A training thread that is not waiting for its peers lets go of the
  // replica only at a collective, which may never come (a stuck file system).
  if (!held_.try_lock_for(std::chrono::seconds(2))) {
    logging::warn(
        "no survivor checkpoint from rank {}: its training thread is not waiting for its peers "
        "(the replica may be mid-step); a restart resumes from the last checkpoint",
        rank_);
    return;
  }
  try {
    save_replica();
  } catch (const std::exception& e) {
    logging::error("rank {}: the survivor checkpoint failed: {}; `latest` is unchanged", rank_,
                   e.what());
  }
  // The replica stays taken: the training thread must not change it before the exit.
}

void SurvivorSave::save_replica() {
  const int64_t step = replica_.step();
  const checkpoint::Checkpoints& checkpoints = *replica_.checkpoints;
  const fs::path claim = fs::path(checkpoints.dir()) / ".survivor";
  const int fd = ::open(claim.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    if (errno != EEXIST)
      throw std::runtime_error("cannot create " + claim.string() + ": " + std::strerror(errno));
    std::ifstream in(claim);
    std::stringstream writer;
    writer << in.rdbuf();
    logging::info("rank {} (step {}): the survivor checkpoint is written by {}", rank_, step,
                  writer.str().empty() ? std::string("another rank") : writer.str());
    return;
  }
  const std::string me = text::format("rank {} on {} (step {})", rank_, host_name(), step);
  const bool claimed = ::write(fd, me.data(), me.size()) == static_cast<ssize_t>(me.size());
  ::close(fd);
  if (!claimed) throw std::runtime_error("cannot write " + claim.string());

  const int64_t saved = latest_step(checkpoints);
  if (saved >= step) {
    logging::info("rank {}: no survivor checkpoint needed: step {} is saved (latest)", rank_,
                  saved);
    return;
  }
  const auto begin = Clock::now();
  logging::warn(
      "rank {}: saving step {}, the last step every rank completed (its collectives returned "
      "here, so every rank's share of it arrived, and this rank applied it), from this rank's "
      "replica; the last checkpoint was {}",
      rank_, step, saved < 0 ? std::string("none") : "step " + std::to_string(saved));
  const std::string dir = replica_.write();
  logging::warn("survivor checkpoint of step {} written to {} by {} in {:.1f} s", step, dir, me,
                base::seconds_since(begin));
}

}  // namespace train
