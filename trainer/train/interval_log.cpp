#include "trainer/train/interval_log.h"

#include <sys/resource.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/logging.h"
#include "base/seconds.h"
#include "trainer/train/slow_ranks.h"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
#include <ATen/DeviceAccelerator.h>
#endif

namespace train {
namespace {

// Every rank's phase seconds over the interval: [ranks, phases], on the CPU.
// Row r is rank r's: ncclAllGather and MPI_Allgather both place each rank's
// send buffer at offset rank x count of the receive buffer (NCCL: float64 for
// kDouble, the device's stream waited for before .cpu()).
torch::Tensor phase_seconds(const std::array<double, kNumPhases>& seconds,
                            distributed::Communicator& comm, const torch::Device& device) {
  const torch::Tensor local = torch::tensor(std::vector<double>(seconds.begin(), seconds.end()),
                                            torch::dtype(torch::kDouble));
  return comm.allgather(local.to(device)).cpu().reshape({comm.world_size(), kNumPhases});
}

// The interval's phase times as shares of its wall time, averaged over ranks.
nlohmann::json phase_shares(const torch::Tensor& seconds, double wall) {
  const torch::Tensor mean = seconds.mean(0) / wall;
  nlohmann::json shares;
  for (size_t p = 0; p < kNumPhases; ++p)
    shares[kPhaseNames[p]] = mean[static_cast<int64_t>(p)].item<double>();
  return shares;
}

// Each rank's time computing (every phase but comm_wait), in rank order.
std::vector<double> compute_seconds(const torch::Tensor& seconds) {
  const auto wait = static_cast<int64_t>(Phase::kCommWait);
  const torch::Tensor compute = seconds.sum(1) - seconds.select(1, wait);
  return {compute.data_ptr<double>(), compute.data_ptr<double>() + compute.numel()};
}

// This rank's peaks so far, MiB: its resident set size and, on a GPU, the
// memory the caching allocator handed out (0 on a CPU, or before LibTorch 2.9
// and its device-generic allocator statistics).
torch::Tensor local_peaks_mb(const torch::Device& device) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double gpu_mb = 0;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
  if (device.is_cuda())
    gpu_mb = static_cast<double>(
                 at::accelerator::getDeviceStats(device.index()).allocated_bytes[0].peak) /
             (1 << 20);
#endif
  return torch::tensor({usage.ru_maxrss / 1024.0, gpu_mb}, torch::dtype(torch::kDouble));
}

// The largest peaks of any rank: {resident set, GPU memory} in MiB.
std::pair<double, double> peak_memory_mb(distributed::Communicator& comm,
                                         const torch::Device& device) {
  const torch::Tensor all = comm.allgather(local_peaks_mb(device).to(device));  // [ranks, 2]
  const torch::Tensor peaks = std::get<0>(all.max(0)).cpu();
  return {peaks[0].item<double>(), peaks[1].item<double>()};
}

}  // namespace

IntervalLog::IntervalLog(std::unique_ptr<MetricsLog> metrics, int64_t first_step, int64_t max_steps,
                         int64_t every, std::vector<std::string> where, double slow_factor)
    : metrics_(std::move(metrics)),
      first_step_(first_step),
      max_steps_(max_steps),
      every_{every},
      where_(std::move(where)),
      slow_factor_(slow_factor),
      interval_start_step_(first_step) {}

void IntervalLog::add(const StepResult& r) {
  if (!r.updated) return;
  sums_.smoothed += r.smoothed_sum;
  sums_.nll += r.nll_sum;
  sums_.tokens += r.tokens;
  sums_.grad_norm += r.grad_norm;
  ++sums_.steps;
}

void IntervalLog::write(const checkpoint::TrainState& state, double lr,
                        const std::array<double, kNumPhases>& seconds,
                        distributed::Communicator& comm, const torch::Device& device) {
  const auto now = Clock::now();
  const double wall = base::seconds(now - start_);
  // The interval's sums, taken before the collectives: a survivor saving the
  // replica while this rank waits in them (survivor_save.h) saves the next
  // interval's, as a checkpoint after this line would.
  const checkpoint::LogWindowSums sums = std::exchange(sums_, checkpoint::LogWindowSums());
  const torch::Tensor all_seconds = phase_seconds(seconds, comm, device);  // collective
  const auto [rss_mb, gpu_mb] = peak_memory_mb(comm, device);              // collective
  const nlohmann::json shares = phase_shares(all_seconds, wall);
  const nlohmann::json slow = name_slow_ranks(state.step, all_seconds);
  if (metrics_ && sums.tokens > 0) {
    const double loss = sums.smoothed / sums.tokens, nll = sums.nll / sums.tokens;
    const double grad_norm = sums.grad_norm / std::max<int64_t>(1, sums.steps);
    const double tokens_per_s = sums.tokens / wall, elapsed = base::seconds(now - run_start_);
    nlohmann::json row = {{"step", state.step},     {"epoch", state.epoch},
                          {"loss", loss},           {"nll", nll},
                          {"ppl", std::exp(nll)},   {"lr", lr},
                          {"grad_norm", grad_norm}, {"tokens_per_s", tokens_per_s},
                          {"time_share", shares},   {"peak_rss_mb", rss_mb},
                          {"elapsed_s", elapsed}};
    if (device.is_cuda()) row["peak_gpu_mb"] = gpu_mb;
    if (!slow.empty()) row["slow_ranks"] = slow;
    row.update(notes_);
    notes_ = nlohmann::json::object();
    std::string progress;
    if (max_steps_ > 0 && state.step > first_step_) {
      const double eta = elapsed / static_cast<double>(state.step - first_step_) *
                         static_cast<double>(max_steps_ - state.step);
      row["progress"] = static_cast<double>(state.step) / static_cast<double>(max_steps_);
      row["eta_s"] = eta;
      progress =
          text::format(" | {:.1f}% ETA {}", 100.0 * state.step / max_steps_, text::clock_time(eta));
    }
    logging::info(
        "step {:>6} | epoch {:>3} | loss {:.4f} | nll {:.4f} | ppl {:8.3f} | lr {:.3e} | "
        "gnorm {:.3f} | {:.0f} tok/s | comm wait {:.1f}% | {:.0f} s{}",
        state.step, state.epoch, loss, nll, std::exp(nll), lr, grad_norm, tokens_per_s,
        100 * shares["comm_wait"].get<double>(), elapsed, progress);
    metrics_->write(row);
  }
  start_ = now;
  interval_start_step_ = state.step;
}

nlohmann::json IntervalLog::name_slow_ranks(int64_t step, const torch::Tensor& seconds) const {
  nlohmann::json named = nlohmann::json::array();
  if (!metrics_) return named;  // rank 0 names them
  const std::vector<double> compute = compute_seconds(seconds);
  const torch::Tensor wait = seconds.select(1, static_cast<int64_t>(Phase::kCommWait)).contiguous();
  const std::vector<double> waits(wait.data_ptr<double>(), wait.data_ptr<double>() + wait.numel());
  const std::vector<SlowRank> slow_ones = slow_ranks(compute, slow_factor_);
  if (slow_ones.empty()) return named;
  const double typical_compute = lower_median(compute), typical_wait = lower_median(waits);
  for (const SlowRank& slow : slow_ones) {
    const std::string& where = where_.at(static_cast<size_t>(slow.rank));
    logging::warn(
        "rank {} ({}) is slow: over steps {}-{} it computed {:.2f} s, {:.2f}x the median rank's "
        "{:.2f} s, and waited {:.2f} s in collectives (the median rank {:.2f} s); if it stays "
        "slow, exclude its node",
        slow.rank, where, interval_start_step_ + 1, step, compute[slow.rank], slow.ratio,
        typical_compute, waits[slow.rank], typical_wait);
    named.push_back({{"rank", slow.rank},
                     {"where", where},
                     {"ratio", slow.ratio},
                     {"compute_s", compute[slow.rank]},
                     {"comm_wait_s", waits[slow.rank]}});
  }
  return named;
}

}  // namespace train
