#include "base/progress.h"

#include <cmath>

#include "base/logging.h"
#include "base/seconds.h"

namespace base {

std::string progress_line(const std::string& what, int64_t done, int64_t total,
                          const std::string& unit, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const double percent =
      total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100;
  const std::string eta = done >= total ? text::clock_time(0)
                          : rate > 0    ? text::clock_time(static_cast<double>(total - done) / rate)
                                        : "?";
  return text::format("{}: {} / {} {} ({:.1f}%), {:.1f} {}/s, ETA {}", what, done, total, unit,
                      percent, rate, unit, eta);
}

Progress::Progress(std::string what, int64_t total, std::string unit, double every_s, bool enabled)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      every_s_(every_s),
      enabled_(enabled) {}

void Progress::advance(int64_t n) { reach(done_ + n); }

void Progress::reach(int64_t done) {
  done_ = done;
  if (!enabled_) return;
  const double elapsed = base::seconds_since(start_);
  if (done_ < total_ && elapsed - last_s_ < every_s_) return;
  last_s_ = elapsed;
  logging::info("{}", progress_line(what_, done_, total_, unit_, elapsed));
}

}  // namespace base
