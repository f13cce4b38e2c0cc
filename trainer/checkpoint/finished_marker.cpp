#include "trainer/checkpoint/finished_marker.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "launch/file_write.h"

namespace checkpoint {

namespace fs = std::filesystem;

namespace {
fs::path marker(const std::string& run_dir) { return fs::path(run_dir) / "finished.json"; }
}  // namespace

void mark_finished(const std::string& run_dir, int64_t step) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char time[32];
  std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  launch::write_file(marker(run_dir), nlohmann::json{{"step", step}, {"time", time}}.dump() + "\n");
}

void clear_finished(const std::string& run_dir) { fs::remove(marker(run_dir)); }

bool is_finished(const std::string& run_dir) { return fs::exists(marker(run_dir)); }

}  // namespace checkpoint
