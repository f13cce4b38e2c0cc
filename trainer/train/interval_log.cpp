#include "trainer/train/interval_log.h"

#include <sys/resource.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>

#include "base/logging.h"
#include "base/seconds.h"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
#include <ATen/DeviceAccelerator.h>
#endif

namespace train {
namespace {

// The interval's phase times as shares of its wall time, averaged over ranks.
nlohmann::json phase_shares(const std::array<double, kNumPhases>& seconds, double wall,
                            distributed::Communicator& comm, const torch::Device& device) {
  torch::Tensor sums = torch::tensor(std::vector<double>(seconds.begin(), seconds.end()),
                                     torch::dtype(torch::kDouble))
                           .to(device);
  comm.allreduce_sum(sums);
  sums = sums.cpu() / (comm.world_size() * wall);
  nlohmann::json shares;
  for (size_t p = 0; p < kNumPhases; ++p) shares[kPhaseNames[p]] = sums[p].item<double>();
  return shares;
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
                         int64_t every)
    : metrics_(std::move(metrics)), first_step_(first_step), max_steps_(max_steps), every_{every} {}

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
  const nlohmann::json shares = phase_shares(seconds, wall, comm, device);  // collective
  const auto [rss_mb, gpu_mb] = peak_memory_mb(comm, device);               // collective
  if (metrics_ && sums_.tokens > 0) {
    const double loss = sums_.smoothed / sums_.tokens, nll = sums_.nll / sums_.tokens;
    const double grad_norm = sums_.grad_norm / std::max<int64_t>(1, sums_.steps);
    const double tokens_per_s = sums_.tokens / wall, elapsed = base::seconds(now - run_start_);
    nlohmann::json row = {{"step", state.step},     {"epoch", state.epoch},
                          {"loss", loss},           {"nll", nll},
                          {"ppl", std::exp(nll)},   {"lr", lr},
                          {"grad_norm", grad_norm}, {"tokens_per_s", tokens_per_s},
                          {"time_share", shares},   {"peak_rss_mb", rss_mb},
                          {"elapsed_s", elapsed}};
    if (device.is_cuda()) row["peak_gpu_mb"] = gpu_mb;
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
  sums_ = checkpoint::LogWindowSums();
  start_ = now;
}

}  // namespace train
