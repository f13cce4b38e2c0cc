#include "base/utc_time.h"

#include <ctime>

namespace base {

namespace {

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);  // std::gmtime's result is shared between threads
  char text[32];
  return std::string(text, std::strftime(text, sizeof text, format, &utc));
}

}  // namespace

std::string utc_now() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_for_path() { return utc_now("%Y-%m-%dT%H-%M-%SZ"); }

}  // namespace base
