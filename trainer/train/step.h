// One optimizer step on one global batch (docs/DESIGN.md, "the global batch"):
//
//   for each of this rank's micro-batches: forward, loss sum, backward
//     (gradients add up; during the last one GradSync allreduces, or
//     reduce-scatters when sharded, the gradient buckets as they fill)
//   wait for the gradient buckets; allreduce the loss and token sums together
//     with this rank's part of the gradients' squared norm and the flags
//     every rank must agree on (preemption, a timed save, the checkpoint
//     being written in the background)
//   skip the update if loss or norm is not finite (an fp16 overflow backs
//     the loss scale off); else an Adam step at the scheduled learning rate
//     on gradients / target tokens of the whole global batch (exactly once;
//     fp16: times the loss scale the loss was multiplied by before
//     backward), clipped by global norm: one factor, applied as Adam reads
//     each gradient; sharded, on this rank's shard, then the parameters'
//     allgather
//
// Nothing in a step waits for the device: whether and how the update runs is
// decided on the device (0-dim tensors: the norm, the factor, the skip, the
// loss scale), and the step's outcome comes back as a StepRecord, copied to
// the host without blocking. The training loop reads it once the next step is
// queued (train/training.cpp), so on a GPU the host stays a step ahead and
// the device never waits for it between steps. On the CPU the record is
// ready when run() returns.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include <c10/core/Event.h>
#include <torch/torch.h>

#include "data_pipeline/loader/prefetcher.h"
#include "trainer/distributed/communicator.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/runtime/precision.h"
#include "trainer/task/objective.h"
#include "trainer/train/loss_scaler.h"
#include "trainer/train/lr_schedule.h"
#include "trainer/train/optimizer.h"
#include "trainer/train/phase_timer.h"

namespace train {

// The flags every rank must agree on, one name each from the rank that
// raises one (TrainStep::run's `flags`) through the step's allreduce
// (StepSums: how many ranks raise it) and its outcome (StepResult: whether
// any did) to what the loop acts on (StepOutcomes::agreed(): kept until then).
struct StepFlags {
  bool preempt = false;             // a preemption signal: save, then exit kExitPreempted
  bool save_time = false;           // rank 0's clock: a timed checkpoint (checkpoint_schedule.h)
  bool checkpoint_writing = false;  // files of the save in flight not yet on disk
  bool checkpoint_failed = false;   // a write of it, or rank 0's commit, failed
};

// The step's outcome, the same on every rank.
struct StepResult {
  int64_t step = 0;
  double smoothed_sum = 0;  // label-smoothed loss summed over the global batch
  double nll_sum = 0;       // negative log-likelihood, summed
  double tokens = 0;        // target tokens (examples for classification) of the global batch
  double grad_norm = 0;     // before clipping
  bool updated = false;     // false: skipped, loss or gradient norm not finite
  bool overflowed = false;  // skipped as an fp16 overflow (the loss scale backed off)
  double loss_scale = 1;    // after the step (fp16; else 1)
  StepFlags flags;          // raised by some rank
};

// What every rank adds up in the step's one allreduce: 0-dim float64 views
// into one buffer, so that a single collective carries them all.
struct StepSums {
  explicit StepSums(const torch::Device& device);
  torch::Tensor all;                    // [8]: the collective's buffer
  torch::Tensor smoothed, nll, tokens;  // the loss sums and target tokens
  torch::Tensor squares;                // this rank's part of the gradients' squared norm
  torch::Tensor preempt, save_time;     // StepFlags: how many ranks raise each
  torch::Tensor checkpoint_writing, checkpoint_failed;
};

// The step's outcome on the device: the sums, and what the device decided
// from them (0-dim float64 tensors; the flags as 0 or 1).
struct StepOutcome {
  StepSums sums;
  torch::Tensor grad_norm, skipped, overflowed, loss_scale;
};

// A step's outcome on its way to the host: one non-blocking copy of the
// device's numbers and an event after it. read() waits for that event only.
class StepRecord {
 public:
  StepRecord(int64_t step, const StepOutcome& outcome);
  int64_t step() const { return step_; }
  StepResult read() const;

 private:
  int64_t step_;
  torch::Tensor host_;  // float64 [12] (step.cpp's Field), page-locked on a GPU's host
  std::shared_ptr<c10::Event> ready_;  // recorded after the copy (GPU only)
};

class TrainStep {
 public:
  struct Options {
    uint64_t seed = 0;     // dropout masks derive from (seed, step, part)
    double clip_norm = 0;  // 0: no clipping
    choices::Precision precision = choices::Precision::kFp32;
  };
  TrainStep(task::Objective& objective, Optimizer& optimizer, distributed::GradSync& grad_sync,
            distributed::Communicator& comm, const LrSchedule& schedule, LossScaler& loss_scaler,
            PhaseTimer& phases, const torch::Device& device, Options options);

  // Collective: every rank calls it with its own micro-batches of the same
  // step. `flags` (this rank's) is asked just before the step's allreduce.
  StepRecord run(const data::LoadedStep& step, const std::function<StepFlags()>& flags);

 private:
  task::Objective& objective_;
  Optimizer& optimizer_;
  distributed::GradSync& grad_sync_;
  distributed::Communicator& comm_;
  const LrSchedule& schedule_;
  LossScaler& loss_scaler_;
  PhaseTimer& phases_;
  const torch::Device device_;
  const Options options_;
};

}  // namespace train
