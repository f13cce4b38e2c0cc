// Checkpointing in a training run, owned in one place: when to save (every
// train.save_every steps, rank 0's clock past train.save_every_minutes, a new
// best validation, a preemption, the end), the save written in the background
// while the next steps train and committed once every rank has written its
// files, a failure of any rank's write ending the run on every rank alike,
// the refusal to save diverged weights, and the preemption's save, which
// holds a second signal until it is on disk (preemption.h).
//
// The loop calls in_flight() and after_step() once per step (the first
// before the step's other actions, the second after them), save_best() when
// validation improves, and finish() at the end; each asks the steps'
// outcomes (step_outcomes.h) for the flags the ranks agreed on.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <torch/torch.h>

#include "launch/ranks.h"
#include "trainer/checkpoint/background_save.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/checkpoint/train_state.h"
#include "trainer/train/checkpoint_schedule.h"
#include "trainer/train/preemption.h"
#include "trainer/train/step_outcomes.h"
#include "trainer/train/survivor_save.h"
#include "trainer/train/watchdog.h"

namespace train {

class Checkpointer {
 public:
  using Clock = std::chrono::steady_clock;
  // What this rank writes of the model as of `state` (rank 0: the weights and
  // state.json; every rank: its optimizer file); it may complete `state`
  // (the loss scale, the log window) first.
  using RankPart = std::function<checkpoint::CheckpointPart(checkpoint::TrainState& state)>;
  struct Options {
    int64_t every_steps;      // train.save_every (0: none)
    double every_minutes;     // train.save_every_minutes (0: none)
    Clock::time_point start;  // whence the minutes count
    double lr;                // optim.lr, named when diverged weights are refused
  };

  // `last_saved_step`: the checkpoint the run resumed from (-1: none).
  Checkpointer(const checkpoint::Checkpoints& checkpoints, const launch::Ranks& ranks,
               Options options, int64_t last_saved_step, torch::nn::Module& model,
               RankPart rank_part, StepOutcomes& outcomes, Watchdog& watchdog,
               PreemptionSignals& signals, SurvivorSave& survivor);

  // This rank's part of a step's flags (StepFlags): a timed save due (rank 0's
  // clock), a save being written, a write failed.
  bool clock_due(Clock::time_point now) const;
  bool writing() const { return saver_.writing(); }
  bool failed() const { return saver_.failed(); }

  // After a step is queued, first: the save in flight, if any — a failed
  // write ends the run (throws on every rank), one whose files every rank
  // has written is committed (it becomes `latest`).
  void in_flight(int64_t step);
  // Last: a save due is begun. True when the ranks agreed to stop for a
  // preemption: its checkpoint is then on disk.
  bool after_step(checkpoint::TrainState& state);
  // Validation's new best: a checkpoint of this step, marked best.
  void save_best(checkpoint::TrainState& state);
  // The end: the last step saved and committed, on every rank.
  void finish(checkpoint::TrainState& state);

 private:
  void save(checkpoint::TrainState& state, bool best);
  void write(checkpoint::TrainState& state, bool best);  // begins the background save
  void finish_writing(int64_t step);  // the save in flight, committed; a failure fails every rank
  void refuse_diverged(int64_t step) const;  // throws before a checkpoint of diverged weights

  const checkpoint::Checkpoints& checkpoints_;
  const launch::Ranks& ranks_;
  const double lr_;
  CheckpointSchedule schedule_;
  checkpoint::BackgroundSave saver_;  // every rank's writes, one save at a time
  int64_t last_saved_step_;
  torch::nn::Module& model_;
  const RankPart rank_part_;
  StepOutcomes& outcomes_;
  Watchdog& watchdog_;
  PreemptionSignals& signals_;
  SurvivorSave& survivor_;  // lent the replica in the saves' collectives (saver_)
};

}  // namespace train
