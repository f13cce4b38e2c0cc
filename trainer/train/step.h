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
  bool preempt = false;     // some rank received a preemption signal
  bool save_due = false;    // rank 0's clock says a timed checkpoint is due
  bool checkpoint_writing = false;  // some rank's files of the save in flight are not on disk yet
  bool checkpoint_failed = false;   // some rank's write of it, or rank 0's commit, failed
};

// What every rank adds up in the step's one allreduce: 0-dim float64 views
// into one buffer, so that a single collective carries them all.
struct StepSums {
  explicit StepSums(const torch::Device& device);
  torch::Tensor all;                    // [8]: the collective's buffer
  torch::Tensor smoothed, nll, tokens;  // the loss sums and target tokens
  torch::Tensor squares;                // this rank's part of the gradients' squared norm
  torch::Tensor preempt, save_time;     // flags: how many ranks raise them
  torch::Tensor checkpoint_writing, checkpoint_failed;  // likewise
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

// What a rank brings to the step besides the batch: its own flags, agreed on in the step.
struct StepFlags {
  bool preempt_requested = false;
  bool save_time_due = false;
  bool checkpoint_writing = false;  // checkpoint/background_save.h
  bool checkpoint_failed = false;
};

// What the ranks agreed on in the steps read so far (any rank's flag), kept
// until acted on (train/step_outcomes.h).
struct AgreedFlags {
  bool preempt = false;    // stop: save, then exit kExitPreempted
  bool save_time = false;  // a timed checkpoint (train/checkpoint_schedule.h)
  // The save in flight: every rank's files written, as of the last step read
  // since it began (the commit may go ahead); a write or commit failed.
  bool checkpoint_written = false;
  bool checkpoint_failed = false;
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
  // step. `flags` is asked just before the step's allreduce.
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
