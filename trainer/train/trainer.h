// The Trainer, which run_training (train/training.h) builds and runs. Its
// constructor, loop and finish are train/training.cpp; its start (the run
// directory locked, then the state resumed or fresh) train/trainer_start.cpp.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/prefetcher.h"
#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/checkpoint/train_state.h"
#include "trainer/choices/compute.h"
#include "trainer/config/run_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/distributed/flight_recorder.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/runtime/device.h"
#include "trainer/task/objective.h"
#include "trainer/task/task_model.h"
#include "trainer/train/checkpointer.h"
#include "trainer/train/interval_log.h"
#include "trainer/train/loss_scaler.h"
#include "trainer/train/lr_schedule.h"
#include "trainer/train/metrics_log.h"
#include "trainer/train/numerics_guard.h"
#include "trainer/train/optimizer.h"
#include "trainer/train/phase_timer.h"
#include "trainer/train/preemption.h"
#include "trainer/train/run_lock.h"
#include "trainer/train/step.h"
#include "trainer/train/step_interval.h"
#include "trainer/train/step_outcomes.h"
#include "trainer/train/survivor_save.h"
#include "trainer/train/validation.h"
#include "trainer/train/watchdog.h"

namespace train {

// Everything of one rank's training job, built in the constructor in the
// order below; run() is the loop.
class Trainer {
 public:
  Trainer(const config::RunConfig& cfg, const checkpoint::CheckpointChoice& resume,
          const launch::ProcessInfo& process, Watchdog& watchdog, PreemptionSignals& signals);
  int run();

 private:
  using Clock = std::chrono::steady_clock;
  // Where training starts: a checkpoint's state, or a fresh one.
  struct Start {
    checkpoint::TrainState state;
    int64_t checkpoint_step = -1;  // the checkpoint resumed from; -1: none
  };
  std::unique_ptr<RunLock> lock_run_directory();
  Start start_or_resume(const checkpoint::CheckpointChoice& resume);
  distributed::GradSyncOptions grad_sync_options() const;
  void warn_about_settings() const;
  void log_setup() const;
  void
  log_restart();    // after an in-job restart (launch/restart.h): said, and noted in metrics.jsonl
  bool validate();  // false: early stop (patience exhausted)
  // What rank `rank` writes of a checkpoint of `state` (Checkpointer::RankPart).
  checkpoint::CheckpointPart rank_part(checkpoint::TrainState& state, int rank);
  // The training loop's replica for a survivor's save (survivor_save.h); or
  // why this rank cannot save one.
  SurvivorSave::Replica replica();
  std::string survivor_unavailable() const;
  int stop_preempted();

  // ---- the ranks, their device and communicator (each needs the ones before) ----
  const Clock::time_point built_at_ = Clock::now();  // timed saves count from here
  const config::RunConfig& cfg_;
  const launch::Ranks ranks_;
  const launch::ProcessInfo process_;          // this rank's place: host, ranks on its node
  const runtime::DeviceChoice device_choice_;  // device and backend, agreed by all ranks
  const torch::Device device_;
  const choices::Precision precision_;    // train.precision, auto decided for device_
  const std::string resolved_toml_;       // with the precision chosen (config.toml, checkpoints)
  distributed::FlightRecorder recorder_;  // comm_'s last collectives, for the watchdog
  SurvivorSave survivor_;                 // told of comm_'s waits; the watchdog asks it
  const std::unique_ptr<distributed::Communicator> comm_;
  const std::filesystem::path run_dir_;
  Watchdog& watchdog_;
  const Watchdog::Watching comm_watch_;  // while it lives, a peer's failure ends the job
  PreemptionSignals& signals_;

  // ---- data, model, Adam, what decides when ----
  const std::unique_ptr<data::Dataset> train_set_;  // its shards checked once per node
  const data::Batcher batcher_;
  const std::unique_ptr<data::Dataset> valid_set_;  // null: no validation (train.valid_every 0)
  const std::unique_ptr<Validator> validator_;
  task::TaskModel model_;
  const std::unique_ptr<task::Objective> objective_;  // the model's loss
  const std::vector<torch::Tensor> params_;
  torch::optim::Adam adam_;  // the whole model's: checkpoints hold its state
  const LrSchedule schedule_;
  const checkpoint::Checkpoints checkpoints_;
  const checkpoint::RunIdentity identity_;
  NumericsGuard guard_;
  PhaseTimer phases_;
  const StepInterval replica_check_;  // dist.check_every

  // ---- the start: the run directory locked before anything is written there;
  // then the state resumed (weights, Adam's moments) or fresh ----
  const std::unique_ptr<RunLock> lock_;  // rank 0's: this job owns the run directory
  const Start start_;
  checkpoint::TrainState state_;  // saved in state.json

  // ---- built on the started state ----
  // GradSync moves the parameters into its buckets and shards Adam's moments:
  // after they are loaded. The rest continue the saved loss scale and log interval.
  distributed::GradSync grad_sync_;
  Optimizer optimizer_;  // steps adam_, or this rank's shard of it
  LossScaler loss_scaler_;
  IntervalLog log_;
  const std::unique_ptr<MetricsLog> valid_metrics_;  // rank 0's valid.jsonl
  StepOutcomes outcomes_;
  Checkpointer checkpointer_;
  TrainStep train_step_;
  data::Prefetcher batches_;  // the global batches from the started state on
};

}  // namespace train
