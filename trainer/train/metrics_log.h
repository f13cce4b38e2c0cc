// A run's figures as one JSON object per line (<run>/metrics.jsonl for
// training, <run>/valid.jsonl for validation), written by rank 0.
//
// A resumed run continues the same file: rows of steps after the checkpoint
// it resumes from (logged by the run that was then interrupted, and about to
// be logged again) are dropped first, so the file reads as one run.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace train {

class MetricsLog {
 public:
  // Keeps the rows with "step" <= resumed_step (0: a fresh run keeps none).
  MetricsLog(const std::string& path, int64_t resumed_step);
  // One line, flushed; a failed write (a full disk) is an error naming the file.
  void write(const nlohmann::json& record);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace train
