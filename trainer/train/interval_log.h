// The log interval: sums of the steps since the last log line, then the line
// itself — the console (rank 0) and a row of <run>/metrics.jsonl:
//
//   step, epoch, loss, nll, ppl, lr, grad_norm, tokens_per_s,
//   time_share {data, forward, backward, comm_wait, update} (mean over ranks),
//   peak_rss_mb and, on GPUs, peak_gpu_mb (the caching allocator's peak; both the max over
//   ranks), elapsed_s, progress and eta_s (to train.max_steps), and slow_ranks
//   when a rank lags (train/slow_ranks.h: rank, where, ratio, compute_s, comm_wait_s);
//   what note() added since the last row (restart: after an in-job restart)
//
// The sums travel in checkpoints (checkpoint::TrainState::log_window), so a run resumed
// mid-interval logs the same means.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/checkpoint/train_state.h"
#include "trainer/distributed/communicator.h"
#include "trainer/train/metrics_log.h"
#include "trainer/train/phase_timer.h"
#include "trainer/train/step.h"
#include "trainer/train/step_interval.h"

namespace train {

class IntervalLog {
 public:
  // metrics: rank 0's metrics.jsonl (null on other ranks). The run's progress
  // is measured from (first_step, now) to max_steps (0: no percent, no ETA).
  // A line every `every` steps (train.log_every), and at max_steps. `where`:
  // each rank's host and device, in rank order (rank 0's; empty elsewhere),
  // for naming a rank `slow_factor` times slower than the median (0: off).
  IntervalLog(std::unique_ptr<MetricsLog> metrics, int64_t first_step, int64_t max_steps,
              int64_t every, std::vector<std::string> where, double slow_factor);

  bool due(int64_t step) const { return every_.due(step) || step == max_steps_; }

  void add(const StepResult& r);  // counts updated steps only
  checkpoint::LogWindowSums& sums() { return sums_; }
  // Rank 0: `value` under `key` in the next metrics.jsonl row (e.g. "restart").
  void note(const std::string& key, nlohmann::json value) { notes_[key] = std::move(value); }

  // Collective: writes the line for the interval ending at `state.step` and
  // starts the next interval.
  void write(const checkpoint::TrainState& state, double lr,
             const std::array<double, kNumPhases>& seconds, distributed::Communicator& comm,
             const torch::Device& device);

 private:
  using Clock = std::chrono::steady_clock;
  // Rank 0: the ranks train/slow_ranks.h names, logged; their rows for metrics.jsonl.
  nlohmann::json name_slow_ranks(int64_t step, const torch::Tensor& seconds) const;

  std::unique_ptr<MetricsLog> metrics_;
  const int64_t first_step_, max_steps_;
  const StepInterval every_;
  const std::vector<std::string> where_;
  const double slow_factor_;
  int64_t interval_start_step_;  // the last step of the previous interval
  const Clock::time_point run_start_ = Clock::now();
  Clock::time_point start_ = Clock::now();
  checkpoint::LogWindowSums sums_;
  nlohmann::json notes_ = nlohmann::json::object();  // for the next row
};

}  // namespace train
