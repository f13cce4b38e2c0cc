// Progress of a run: one human line per log interval on rank 0, and the same
// figures appended as one JSON object per line to <run>/metrics.jsonl.
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace train {

class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);  // appends: a resumed run continues the file
  // record: {"step", "epoch", "loss", "nll", "ppl", "lr", "grad_norm", "tokens_per_s", ...}
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

}  // namespace train
