// Preemption: SIGUSR1 (Slurm's --signal warning) or SIGTERM asks the job to
// stop. The handler only sets a flag; the training loop folds it into the
// step's allreduce, so every rank learns of a signal that reached any one of
// them at the same step boundary, saves once and exits with kExitPreempted.
// A second signal exits at once (128 + signal number): a checkpoint being
// written is left as a temporary directory that is never taken for one; once
// the outcome is settled, with that outcome's code.
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
  // The job's outcome is decided (done, or preempted with its checkpoint
  // saved): from now on a second signal exits with `exit_code`, not
  // 128 + signal. mpirun sends TERM to the ranks still shutting down once one
  // has exited non-zero (75), and srun --kill-on-bad-exit does the same: those
  // ranks, signalled before, then exit 75 too.
  void settle(int exit_code);

  PreemptionSignals(const PreemptionSignals&) = delete;
  PreemptionSignals& operator=(const PreemptionSignals&) = delete;
};

}  // namespace train
