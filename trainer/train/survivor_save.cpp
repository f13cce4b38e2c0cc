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

#include "base/host_name.h"
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

}  // namespace

SurvivorSave::SurvivorSave(int rank, double peer_lost_after_s, PreemptionSignals& signals)
    : rank_(rank), peer_lost_after_s_(peer_lost_after_s), signals_(signals) {
  g_continued = false;
  struct sigaction action {};
  action.sa_handler = on_continue;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGCONT, &action, &g_previous_cont);
}

SurvivorSave::~SurvivorSave() { sigaction(SIGCONT, &g_previous_cont, nullptr); }

SurvivorSave::Holding::Holding(SurvivorSave& save, Replica replica) : save_(save) {
  std::lock_guard<std::mutex> lock(save_.mutex_);
  save_.replica_ = std::move(replica);
  save_.state_ = kHeld;
  save_.holder_ = std::this_thread::get_id();
}

// The training thread gets here only holding the replica: a save that took
// it keeps the thread in done_waiting().
SurvivorSave::Holding::~Holding() {
  std::lock_guard<std::mutex> lock(save_.mutex_);
  save_.state_ = kClosed;
  save_.holder_ = std::thread::id();
}

SurvivorSave::Keeping::Keeping(SurvivorSave& save) : save_(save) {
  if (save_.is_holder()) ++save_.keeping_;
}

SurvivorSave::Keeping::~Keeping() {
  if (save_.is_holder()) --save_.keeping_;
}

void SurvivorSave::waiting(bool peers_may_lag) {
  if (!is_holder() || keeping_ > 0) return;  // another thread's wait, or the replica kept
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_since_ = ticks(Clock::now());
  peers_may_lag_ = peers_may_lag;
  state_ = kLent;
}

void SurvivorSave::done_waiting() {
  if (!is_holder() || keeping_ > 0) return;
  std::unique_lock<std::mutex> lock(mutex_);
  taken_.wait(lock, [this] { return state_ != kTaken; });  // for good: the process exits
  state_ = kHeld;
  waiting_since_ = 0;
  peers_may_lag_ = false;
}

std::string SurvivorSave::peer_lost(Clock::time_point now) {
  if (peer_lost_after_s_ <= 0) return "";
  if (g_continued.exchange(false)) continued_seen_ = ticks(now);
  if (signals_.requested() && signal_seen_ == 0) signal_seen_ = ticks(now);
  // A CONT counts for kContinueCounts seconds (mpirun's TERM follows it by
  // odls_base_sigkill_timeout and counts from then on), so that a job
  // suspended and resumed (scontrol suspend, Ctrl-Z) is not ended much later
  // by a long wait; TERM and USR1 count for good (the job stops anyway).
  int64_t heard = 0;  // the earliest signal that counts
  if (continued_seen_ != 0 && seconds_between(continued_seen_, ticks(now)) < kContinueCounts)
    heard = continued_seen_;
  if (signal_seen_ != 0 && (heard == 0 || signal_seen_ < heard)) heard = signal_seen_;
  if (heard == 0) return "";
  int64_t since = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == kLent && !peers_may_lag_) since = waiting_since_;
  }
  if (since == 0) return "";  // not waiting for its peers, or for peers that may lag
  // Counted from the later of the signal and the wait's beginning: a healthy
  // rank, signalled, finishes its wait once its peers reach the collective.
  const double stuck = seconds_between(std::max(since, heard), ticks(now));
  if (stuck < peer_lost_after_s_) return "";
  return text::format(
      "rank {} on {}: {} received, and waiting for its peers {:.0f} s after it "
      "(dist.peer_lost_after_s = {:g}): a peer is lost; ending the job",
      rank_, base::host_name(),
      heard == signal_seen_ ? "signal " + std::to_string(signals_.signal())
                            : std::string("SIGCONT"),
      stuck, peer_lost_after_s_);
}

void SurvivorSave::save() {
  if (!unavailable_.empty()) {
    logging::warn("no survivor checkpoint: {}; a restart resumes from the last checkpoint",
                  unavailable_);
    return;
  }
  // A training thread that is not waiting for its peers lends the replica
  // only at a collective, which may never come (a stuck file system).
  {
    std::unique_lock<std::mutex> lock(mutex_);
    taken_.wait_for(lock, std::chrono::seconds(2), [this] { return state_ != kHeld; });
    if (state_ != kLent) {
      logging::warn(
          "no survivor checkpoint from rank {}: its training thread is not waiting for its peers "
          "({}); a restart resumes from the last checkpoint",
          rank_,
          state_ == kHeld ? "the replica may be mid-step" : "it is not in the training loop");
      return;
    }
    state_ = kTaken;  // never lent back: the training thread must not change it before the exit
  }
  try {
    save_replica();
  } catch (const std::exception& e) {
    logging::error("rank {}: the survivor checkpoint failed: {}; `latest` is unchanged", rank_,
                   e.what());
  }
}

void SurvivorSave::save_replica() {
  const int64_t step = replica_.step();
  const checkpoint::Checkpoints& checkpoints = *replica_.checkpoints;
  fs::create_directories(checkpoints.dir());  // before the run's first checkpoint too
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
  const std::string me = text::format("rank {} on {} (step {})", rank_, base::host_name(), step);
  const bool claimed = ::write(fd, me.data(), me.size()) == static_cast<ssize_t>(me.size());
  ::close(fd);
  if (!claimed) throw std::runtime_error("cannot write " + claim.string());

  const int64_t saved = checkpoints.latest_step();
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
  // A TERM or USR1 during the write (a second one: the first may be what
  // ended the job) is held, as during every checkpoint write (preemption.h),
  // not an exit that would leave it half written; the job ends after it.
  const auto end_write = [&] {
    if (const int held = signals_.end_save(-1))
      logging::info("rank {}: signal {} during the survivor's write was held; the job ends now",
                    rank_, held);
  };
  signals_.begin_save();
  std::string dir;
  try {
    dir = replica_.write();
  } catch (...) {
    end_write();
    throw;
  }
  end_write();
  logging::warn("survivor checkpoint of step {} written to {} by {} in {:.1f} s", step, dir, me,
                base::seconds_since(begin));
}

}  // namespace train
