// Seconds, as a double, of a duration or since a time point of the steady clock.
#pragma once
#include <chrono>

namespace base {

inline double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return seconds(std::chrono::steady_clock::now() - start);
}

}  // namespace base
