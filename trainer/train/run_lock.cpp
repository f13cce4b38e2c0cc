#include "trainer/train/run_lock.h"

#include <filesystem>
#include <stdexcept>

namespace train {

RunLock::RunLock(const std::string& run_dir) : lock_(take(run_dir)) {}

base::HolderLock RunLock::take(const std::string& run_dir) {
  try {
    return base::HolderLock((std::filesystem::path(run_dir) / ".lock").string(),
                              "a second trainer on this run directory would not be detected");
  } catch (const base::HolderLock::Held& held) {
    throw std::runtime_error("the run directory " + run_dir + " is in use by another trainer (" +
                             held.holder + ", holding " +
                             (std::filesystem::path(run_dir) / ".lock").string() +
                             "): wait for it to end, stop it, or give this run another --run.name");
  }
}

}  // namespace train
