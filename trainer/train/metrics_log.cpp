#include "trainer/train/metrics_log.h"

#include "base/file_write.h"

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace train {

namespace {

// Rewrites `path` with only its rows up to `step` (atomically: tmp + rename).
void truncate_after(const std::string& path, int64_t step) {
  std::ifstream in(path);
  if (!in) return;
  std::vector<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_object() && row.contains("step") && row["step"].get<int64_t>() <= step)
      kept.push_back(line);
  }
  std::string text;
  for (const auto& row : kept) text += row + "\n";
  base::write_file(path, text);
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, int64_t resumed_step) : path_(path) {
  truncate_after(path, resumed_step);
  errno = 0;
  out_.open(path, std::ios::app);
  base::check_written(out_, path);
}

void MetricsLog::write(const nlohmann::json& record) {
  errno = 0;
  out_ << record.dump() << "\n";
  base::check_written(out_, path_);
}

}  // namespace train
