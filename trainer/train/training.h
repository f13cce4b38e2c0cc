// The training job of one rank: the loop every rank runs in lockstep.
#pragma once
#include <string>

#include "launch/process.h"
#include "trainer/config/run_config.h"

namespace train {

// resolved_toml: the config as resolved (file + command line), saved in the run dir.
void run_training(const config::RunConfig& cfg, const std::string& resolved_toml,
                  const launch::ProcessInfo& process);

}  // namespace train
