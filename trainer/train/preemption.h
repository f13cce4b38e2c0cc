// Preemption: SIGUSR1 (Slurm's --signal warning) or SIGTERM asks the job to
// stop. The handler only sets a flag; the training loop folds it into the
// step's allreduce, so every rank learns of a signal that reached any one of
// them at the same step boundary, saves once and exits with kExitPreempted.
// A second signal exits at once (128 + signal number): a checkpoint being
// written is left as a temporary directory that is never taken for one.
// main() holds one for the process's life, so a signal arriving after the
// last step (or before the loop) never kills the trainer with 128 + signal.
#pragma once

namespace train {

class PreemptionSignals {
 public:
  PreemptionSignals();   // installs the handlers
  ~PreemptionSignals();  // restores the previous ones
  bool requested() const;
  int signal() const;  // the first signal received, 0 if none

  PreemptionSignals(const PreemptionSignals&) = delete;
  PreemptionSignals& operator=(const PreemptionSignals&) = delete;
};

}  // namespace train
