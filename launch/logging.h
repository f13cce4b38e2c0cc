// Logging through spdlog, every line tagged with the rank. Rank 0 prints the
// normal progress lines; other ranks print only warnings and errors.
#pragma once
#include "launch/process.h"

namespace launch {

void setup_logging(const ProcessInfo& info);

}  // namespace launch
