#include "trainer/eval/metrics/signature.h"

namespace eval::metrics {

std::string format_signature(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string signature;
  for (const auto& [key, value] : fields) signature += key + ":" + value + "|";
  return signature + "version:" + kSacrebleuVersion;
}

}  // namespace eval::metrics
