// The project's logging interface: every line tagged with the rank; rank 0
// prints progress (info), other ranks only warnings and errors.
//
//   logging::info("step {:>6} | loss {:.4f}", step, loss);   // text::format patterns
//
// spdlog (and the fmt it is built against) stays inside logging.cpp, a
// torch-free translation unit. LibTorch ≥ 2 ships its own fmt headers, which
// shadow the system's on a torch target's include path: a torch translation
// unit that included spdlog would compile against one fmt and link another.
#pragma once
#include <string>

#include "base/text_format.h"

namespace logging {

enum class Level { kInfo, kWarn, kError, kCritical };

void setup(int rank);  // once, after MPI start-up: the rank that tags each line
bool enabled(Level level);                    // false for info on ranks > 0
void write(Level level, const std::string& line);
void flush();

template <class... Args>
void log(Level level, std::string_view pattern, const Args&... args) {
  if (enabled(level)) write(level, text::format(pattern, args...));
}
template <class... Args>
void info(std::string_view pattern, const Args&... args) {
  log(Level::kInfo, pattern, args...);
}
template <class... Args>
void warn(std::string_view pattern, const Args&... args) {
  log(Level::kWarn, pattern, args...);
}
template <class... Args>
void error(std::string_view pattern, const Args&... args) {
  log(Level::kError, pattern, args...);
}
template <class... Args>
void critical(std::string_view pattern, const Args&... args) {
  log(Level::kCritical, pattern, args...);
}

}  // namespace logging
