#include "base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace logging {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarn: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
    case Level::kCritical: return spdlog::level::critical;
  }
  return spdlog::level::info;
}

}  // namespace

void setup(int rank) {
  auto logger = spdlog::stderr_color_mt("rank" + std::to_string(rank));
  logger->set_pattern("[%H:%M:%S] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  logger->set_level(rank == 0 ? spdlog::level::info : spdlog::level::warn);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

bool enabled(Level level) { return spdlog::default_logger_raw()->should_log(to_spdlog(level)); }

void write(Level level, const std::string& line) {
  spdlog::default_logger_raw()->log(to_spdlog(level), "{}", line);
}

void flush() { spdlog::default_logger_raw()->flush(); }

}  // namespace logging
