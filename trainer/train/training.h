// The training job of one rank: the loop every rank runs in lockstep.
#pragma once
#include <string>

#include "launch/process.h"
#include "trainer/checkpoint/checkpoint_choice.h"
#include "trainer/config/run_config.h"
#include "trainer/train/preemption.h"
#include "trainer/train/watchdog.h"

namespace train {

// cfg: the config as resolved (file + command line), saved in the run dir.
// resume: the --resume choice (train/resume.h).
// Returns the exit code (train/exit_codes.h): kExitDone, or kExitPreempted
// after a signal in `signals` and the checkpoint it caused. Errors throw. The
// loop tells `watchdog` which step and phase it is in.
int run_training(const config::RunConfig& cfg, const checkpoint::CheckpointChoice& resume,
                 const launch::ProcessInfo& process, Watchdog& watchdog,
                 PreemptionSignals& signals);

}  // namespace train
