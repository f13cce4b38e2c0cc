// Exit codes of the trainer, for job scripts (slurm/train.sh requeues on 75).
#pragma once

namespace train {

constexpr int kExitDone = 0;        // trained to max_steps / max_epochs / early stop
constexpr int kExitFailed = 1;      // an error (the log names rank and cause)
constexpr int kExitUsage = 2;       // bad command line or config
constexpr int kExitPreempted = 75;  // signal received, checkpoint saved: resume me (EX_TEMPFAIL)
constexpr int kExitWatchdog =
    124;  // a step or collective exceeded train.watchdog_s (as timeout(1))

}  // namespace train
