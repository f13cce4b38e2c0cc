#include "launch/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace launch {

void setup_logging(const ProcessInfo& info) {
  auto logger = spdlog::stderr_color_mt("rank" + std::to_string(info.rank));
  logger->set_pattern(fmt::format("[%H:%M:%S] [rank {}] [%^%l%$] %v", info.rank));
  logger->set_level(info.rank == 0 ? spdlog::level::info : spdlog::level::warn);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace launch
