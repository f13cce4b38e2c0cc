#include "trainer/checkpoint/background_save.h"

#include <pthread.h>
#include <signal.h>

#include <exception>
#include <utility>

#include "base/logging.h"
#include "base/seconds.h"

namespace checkpoint {
namespace {

template <typename T>
bool ready(const std::shared_future<T>& future) {
  return future.valid() && future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// `body` on a thread of its own. The preemption signals (train/preemption.h)
// go to the training thread: here they would interrupt the writer's system
// calls (EINTR), failing the very checkpoint a preemption waits for.
template <typename Body>
auto on_thread(Body body) {
  return std::async(std::launch::async,
                    [body = std::move(body)] {
                      sigset_t preemption;
                      sigemptyset(&preemption);
                      sigaddset(&preemption, SIGTERM);
                      sigaddset(&preemption, SIGUSR1);
                      pthread_sigmask(SIG_BLOCK, &preemption, nullptr);
                      return body();
                    })
      .share();
}

std::shared_future<std::string> already(std::string error) {
  std::promise<std::string> done;
  done.set_value(std::move(error));
  return done.get_future().share();
}

}  // namespace

BackgroundSave::~BackgroundSave() {
  if (writing_.valid() && !writing_.get().error.empty()) logging::error("{}", writing_.get().error);
  if (committing_.valid() && !committing_.get().empty()) logging::error("{}", committing_.get());
}

void BackgroundSave::save(int64_t step, const CheckpointPart& part, bool best) {
  begin(step);
  write(part, best);
}

void BackgroundSave::begin(int64_t step) {
  finish();
  const launch::WaitingForPeers waiting(peer_waits_, /*peers_may_lag=*/true);
  launch::on_main(ranks_, [&] { tmp_ = checkpoints_.begin_save(step); });
  tmp_ = ranks_.broadcast(tmp_);
  step_ = step;
}

void BackgroundSave::write(const CheckpointPart& part, bool best) {
  begun_ = std::chrono::steady_clock::now();
  take_snapshot(snapshot_, step_, part);
  best_ = best;
  writing_ = on_thread([this] {
    Written written;
    try {
      written.sums = checkpoints_.write_part(snapshot_, tmp_);
    } catch (const std::exception& e) {
      written.error = e.what();
    }
    return written;
  });
  awaiting_commit_ = true;
}

bool BackgroundSave::writing() const { return writing_.valid() && !ready(writing_); }

bool BackgroundSave::failed() const {
  return (ready(writing_) && !writing_.get().error.empty()) ||
         (ready(committing_) && !committing_.get().empty());
}

void BackgroundSave::commit() { gather_and_commit(/*peers_may_lag=*/false); }

void BackgroundSave::gather_and_commit(bool peers_may_lag) {
  awaiting_commit_ = false;
  const Written& mine = writing_.get();
  std::vector<std::string> errors, sums;
  {
    const launch::WaitingForPeers waiting(peer_waits_, peers_may_lag);
    errors = ranks_.gather(mine.error);
    sums = ranks_.gather(mine.sums);
  }
  if (!ranks_.is_main()) return;
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) {
      checkpoints_.abandon(tmp_);
      committing_ =
          already(ranks_.size() > 1 ? "rank " + std::to_string(r) + ": " + errors[r] : errors[r]);
      return;
    }
  std::string all;
  for (const auto& lines : sums) all += lines;
  committing_ = on_thread([this, step = snapshot_.step, tmp = tmp_, all = std::move(all),
                           best = best_, begun = begun_] {
    try {
      const std::string dir = checkpoints_.commit(step, tmp, all, best);
      logging::info("checkpoint {} written ({:.1f} s, beside training)", dir,
                    base::seconds_since(begun));
      return std::string();
    } catch (const std::exception& e) {
      checkpoints_.abandon(tmp);
      return std::string(e.what());
    }
  });
}

void BackgroundSave::finish() {
  const bool others_wait_for_rank_0 = !ranks_.is_main();
  if (awaiting_commit_) gather_and_commit(others_wait_for_rank_0);
  std::string failure;
  if (committing_.valid()) failure = committing_.get();
  committing_ = {};
  writing_ = {};
  {
    const launch::WaitingForPeers waiting(peer_waits_, others_wait_for_rank_0);
    failure = ranks_.broadcast(failure);
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

}  // namespace checkpoint
