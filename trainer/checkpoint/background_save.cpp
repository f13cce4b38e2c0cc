#include "trainer/checkpoint/background_save.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <exception>
#include <utility>

#include "launch/logging.h"

namespace checkpoint {

BackgroundSave::~BackgroundSave() {
  try {
    wait();
  } catch (const std::exception& e) {
    logging::error("{}", e.what());
  }
}

void BackgroundSave::save(int64_t step, const torch::nn::Module& model, torch::optim::Adam& adam,
                          nlohmann::json state, bool best) {
  wait();
  take_snapshot(snapshot_, step, model, adam, std::move(state));
  writing_ = std::async(std::launch::async, [this, best] {
    // The preemption signals (train/preemption.h) go to the training thread:
    // here they would interrupt the writer's system calls (EINTR), failing
    // the very checkpoint a preemption waits for.
    sigset_t preemption;
    sigemptyset(&preemption);
    sigaddset(&preemption, SIGTERM);
    sigaddset(&preemption, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &preemption, nullptr);
    const auto begin = std::chrono::steady_clock::now();
    const std::string dir = checkpoints_.save(snapshot_);
    if (best) checkpoints_.mark_best(dir);
    logging::info("checkpoint {} written ({:.1f} s, beside training)", dir,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  });
}

void BackgroundSave::wait() {
  if (writing_.valid()) writing_.get();  // get() leaves it invalid, also when it throws
}

}  // namespace checkpoint
