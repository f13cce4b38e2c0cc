#include "launch/restart.h"

#include <cstdlib>
#include <stdexcept>

namespace launch {

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

template <typename Parse>
auto number(const char* name, Parse&& parse) {
  const std::string text = variable(name);
  try {
    size_t used = 0;
    const auto value = parse(text, &used);
    if (used == text.size()) return value;
  } catch (const std::logic_error&) {
  }
  throw std::invalid_argument(std::string(name) + " is not a number: '" + text + "'");
}

}  // namespace

std::optional<Restart> restart_from_environment() {
  if (variable("TRAINER_RESTART").empty()) return std::nullopt;
  const auto integer = [](const std::string& s, size_t* used) { return std::stoi(s, used); };
  const auto real = [](const std::string& s, size_t* used) { return std::stod(s, used); };
  Restart r;
  r.number = number("TRAINER_RESTART", integer);
  r.lost_nodes = variable("TRAINER_RESTART_LOST_NODES");
  r.failed_exit = number("TRAINER_RESTART_EXIT", integer);
  r.failed_at = number("TRAINER_RESTART_FAILED_AT", real);
  return r;
}

}  // namespace launch
