#include "trainer/checkpoint/finished_marker.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/file_write.h"
#include "base/utc_time.h"

namespace checkpoint {

namespace fs = std::filesystem;

namespace {
fs::path marker(const std::string& run_dir) { return fs::path(run_dir) / "finished.json"; }
}  // namespace

void mark_finished(const std::string& run_dir, int64_t step) {
  base::write_file(marker(run_dir),
                     nlohmann::json{{"step", step}, {"time", base::utc_now()}}.dump() + "\n");
}

void clear_finished(const std::string& run_dir) { fs::remove(marker(run_dir)); }

bool is_finished(const std::string& run_dir) { return fs::exists(marker(run_dir)); }

}  // namespace checkpoint
