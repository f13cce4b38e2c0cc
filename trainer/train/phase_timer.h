// Where a rank's step time goes, and the watchdog's heartbeat, in one scope:
//
//   { auto scope = phases.enter(Phase::kForward, step);  ... forward ... }
//
// Entering a phase tells the watchdog which step and phase this rank is in.
// On the CPU a phase's time is its wall time. On a GPU the host only queues
// work, so its clock says nothing about the work: the scope records a CUDA
// event on the current stream at entry and at exit, and take() — at log time,
// where it waits for the events — sums the GPU time between each pair. So
// comm_wait on a GPU is the time the compute stream stood waiting for the
// gradient allreduce.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "trainer/train/watchdog.h"

namespace train {

enum class Phase { kData, kForward, kBackward, kCommWait, kUpdate };
constexpr size_t kNumPhases = 5;
// The names metrics.jsonl's time_share uses.
constexpr std::array<const char*, kNumPhases> kPhaseNames = {"data", "forward", "backward",
                                                             "comm_wait", "update"};

class PhaseTimer {
 public:
  PhaseTimer(Watchdog& watchdog, const torch::Device& device);
  ~PhaseTimer();

  class Scope {
   public:
    Scope(PhaseTimer& timer, Phase phase);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTimer& timer_;
    Phase phase_;
    std::chrono::steady_clock::time_point start_;
  };

  [[nodiscard]] Scope enter(Phase phase, int64_t step);
  // Seconds per phase (kPhaseNames' order) since the last take(); on a GPU it
  // waits for the recorded events.
  std::array<double, kNumPhases> take();

 private:
  struct DeviceEvents;  // CUDA event pairs (LibTorch ≥ 2), kept out of this header

  Watchdog& watchdog_;
  std::array<double, kNumPhases> host_seconds_{};
  std::unique_ptr<DeviceEvents> device_events_;  // null on the CPU
};

}  // namespace train
