// Preemption: SIGUSR1 (Slurm's --signal warning) or SIGTERM asks the job to
// stop. The handler only sets a flag; the training loop folds it into the
// step's allreduce, so every rank learns of a signal that reached any one of
// them at the same step boundary, saves once and exits with kExitPreempted.
//
// A second signal, by when it arrives; the exit code says whether the
// stop's checkpoint was saved (75) or not (128 + signal):
//   before the checkpoint is begun    exits at once, 128 + signal (the
//                                     previous checkpoint is the latest)
//   while the stop's checkpoint is    is held: the checkpoint is finished
//   written                           first, then the job exits 75 (a third
//                                     signal exits at once, for a write
//                                     that hangs)
//   once the outcome is settled       exits at once with that outcome's
//                                     code (75 after the stop's checkpoint)
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

  // Around writing the stop's checkpoint: a second signal meanwhile is held.
  // `settles` is the outcome once it is written (kExitPreempted), or -1 when
  // the write failed. Returns the held signal, 0 if none.
  void begin_save();
  int end_save(int settles);

  PreemptionSignals(const PreemptionSignals&) = delete;
  PreemptionSignals& operator=(const PreemptionSignals&) = delete;
};

}  // namespace train
