#include "trainer/checkpoint/background_save.h"

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

void BackgroundSave::save(Snapshot snapshot, bool best) {
  wait();
  writing_ = std::async(std::launch::async, [this, snapshot = std::move(snapshot), best] {
    const auto begin = std::chrono::steady_clock::now();
    const std::string dir = checkpoints_.save(snapshot);
    if (best) checkpoints_.mark_best(dir);
    logging::info("checkpoint {} written ({:.1f} s, beside training)", dir,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  });
}

void BackgroundSave::wait() {
  if (writing_.valid()) writing_.get();  // get() leaves it invalid, also when it throws
}

}  // namespace checkpoint
