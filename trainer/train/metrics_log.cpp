#include "trainer/train/metrics_log.h"

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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& row : kept) out << row << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, int64_t resumed_step) {
  truncate_after(path, resumed_step);
  out_.open(path, std::ios::app);
  if (!out_) throw std::runtime_error("cannot open " + path + " for appending");
}

void MetricsLog::write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace train
