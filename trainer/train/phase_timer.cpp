#include "trainer/train/phase_timer.h"

#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include <stdexcept>

#include "base/seconds.h"

namespace train {
namespace {

// The watchdog's phase names (forward and backward are one for it).
constexpr std::array<const char*, kNumPhases> kWatchdogNames = {
    "data", "forward/backward", "forward/backward", "allreduce", "update"};

using Clock = std::chrono::steady_clock;

}  // namespace

// Event pairs on the device's current stream, reused from one take() to the next.
struct PhaseTimer::DeviceEvents {
  struct Pair {
    Phase phase;
    c10::Event begin, end;
  };
  torch::Device device;
  std::vector<std::unique_ptr<Pair>> pairs;
  size_t used = 0;

  c10::Stream current_stream() const {
    return c10::impl::getDeviceGuardImpl(device.type())->getStream(device);
  }
  void begin(Phase phase) {
    if (used == pairs.size())
      pairs.push_back(std::make_unique<Pair>(
          Pair{phase, c10::Event(device.type(), c10::EventFlag::BACKEND_DEFAULT),
               c10::Event(device.type(), c10::EventFlag::BACKEND_DEFAULT)}));
    Pair& p = *pairs[used];
    p.phase = phase;
    p.begin.record(current_stream());
  }
  void end() { pairs[used++]->end.record(current_stream()); }

  std::array<double, kNumPhases> take() {
    std::array<double, kNumPhases> seconds{};
#if TORCH_VERSION_MAJOR >= 2
    for (size_t i = 0; i < used; ++i) {
      Pair& p = *pairs[i];
      p.end.synchronize();
      seconds[static_cast<size_t>(p.phase)] += p.begin.elapsedTime(p.end) / 1000.0;  // ms
    }
#else
    throw std::logic_error("GPU phase timing needs LibTorch >= 2 (c10::Event::elapsedTime)");
#endif
    used = 0;
    return seconds;
  }
};

PhaseTimer::PhaseTimer(Watchdog& watchdog, const torch::Device& device) : watchdog_(watchdog) {
  if (device.is_cuda()) device_events_.reset(new DeviceEvents{device, {}, 0});
}

PhaseTimer::~PhaseTimer() = default;

PhaseTimer::Scope PhaseTimer::enter(Phase phase, int64_t step) {
  watchdog_.beat(step, kWatchdogNames[static_cast<size_t>(phase)]);
  return Scope(*this, phase);
}

PhaseTimer::Scope::Scope(PhaseTimer& timer, Phase phase)
    : timer_(timer), phase_(phase), start_(Clock::now()) {
  if (timer_.device_events_) timer_.device_events_->begin(phase_);
}

PhaseTimer::Scope::~Scope() {
  if (timer_.device_events_)
    timer_.device_events_->end();
  else
    timer_.host_seconds_[static_cast<size_t>(phase_)] += base::seconds_since(start_);
}

std::array<double, kNumPhases> PhaseTimer::take() {
  if (device_events_) return device_events_->take();
  const auto seconds = host_seconds_;
  host_seconds_ = {};
  return seconds;
}

}  // namespace train
