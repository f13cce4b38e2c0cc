// Progress of a long job, logged by rank 0 at most every `every_s` seconds
// and once at the end:
//
//   evaluating test: 1200 / 3000 sentences (40.0%), 35.2 sentences/s, ETA 0:00:51
//
// Under mpirun rank 0 counts its own share (evaluate's batches, prepare_data's
// lines: the ranks advance together) and the line says so.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace base {

// The line for `done` of `total` `unit` after `seconds`:
// rate = done / seconds, ETA = (total - done) / rate (H:MM:SS, "?" before any rate).
std::string progress_line(const std::string& what, int64_t done, int64_t total,
                          const std::string& unit, double seconds);

class Progress {
 public:
  // Logs nothing unless `enabled`; every_s = 0 logs every advance.
  Progress(std::string what, int64_t total, std::string unit, double every_s, bool enabled);
  void advance(int64_t n);   // n more done
  void reach(int64_t done);  // `done` in all

 private:
  std::string what_, unit_;
  int64_t total_, done_ = 0;
  double every_s_, last_s_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace base
