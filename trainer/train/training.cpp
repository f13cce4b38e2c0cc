// The training job of one rank, top to bottom: set up, then one optimizer
// step per global batch (train/step.h), then finish. Between steps: the log
// line, the replicas check, validation, checkpoints and preemption.
//
// Resume state is TrainState (step, epoch, cursor, ...) plus weights and Adam
// moments: the data order derives from (seed, epoch), dropout from (seed,
// step, part), so a resumed run continues bit for bit (same world size) or on
// the same global batches (another world size).
//
// A step's outcome (its losses, whether it was applied, the agreed flags) is
// read once the next step is queued (train/step.h): on a GPU the host keeps a
// step ahead of the device. Where something needs the model as of a step (the
// log line, the replicas check, validation, a checkpoint, preemption), that
// step's outcome is read first. So a flag raised during step n (preemption,
// a timed save) is acted on after step n + 1, on every rank alike.
#include "trainer/train/training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "data_pipeline/batch_plan.h"
#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/loader/prefetcher.h"
#include "launch/file_write.h"
#include "launch/logging.h"
#include "launch/ranks.h"
#include "launch/seconds.h"
#include "launch/shared_directory.h"
#include "launch/text_format.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/finished_marker.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"
#include "trainer/checkpoint/train_state.h"
#include "trainer/distributed/consistency.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/distributed/make_communicator.h"
#include "trainer/distributed/recorded_communicator.h"
#include "trainer/runtime/determinism.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"
#include "trainer/task/objective.h"
#include "trainer/train/checkpointer.h"
#include "trainer/train/exit_codes.h"
#include "trainer/train/interval_log.h"
#include "trainer/train/loss_scaler.h"
#include "trainer/train/lr_schedule.h"
#include "trainer/train/numerics_guard.h"
#include "trainer/train/optimizer.h"
#include "trainer/train/phase_timer.h"
#include "trainer/train/preemption.h"
#include "trainer/train/resume.h"
#include "trainer/train/run_lock.h"
#include "trainer/train/step.h"
#include "trainer/train/step_interval.h"
#include "trainer/train/step_outcomes.h"
#include "trainer/train/validation.h"

namespace train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

data::DatasetOptions dataset_options(const config::RunConfig& cfg) {
  data::DatasetOptions o;
  o.verify_checksums = cfg.data.verify_checksums;
  return o;
}

data::BatcherOptions batcher_options(const config::RunConfig& cfg) {
  data::BatcherOptions o;
  o.batch_tokens = cfg.data.batch_tokens;
  o.max_len = cfg.data.max_len;
  o.seed = static_cast<uint64_t>(cfg.run.seed);
  return o;
}

// This rank's part of each global batch.
data::PlanOptions plan_options(const config::RunConfig& cfg, const launch::Ranks& ranks) {
  data::PlanOptions o;
  o.world_size = ranks.size();
  o.rank = ranks.rank();
  o.accum_steps = cfg.train.accum_steps;
  o.max_steps = cfg.train.max_steps;
  o.max_epochs = cfg.train.max_epochs;
  return o;
}

// train.precision for `device`, with the reason in the log (auto: bf16 where
// the device has bfloat16 units; runtime/precision.h). Collective: auto is
// bf16 only where every rank's device has it, so that ranks on nodes of
// different CPUs or GPUs train alike.
choices::Precision chosen_precision(choices::Precision setting, const torch::Device& device,
                                    const launch::Ranks& ranks) {
  runtime::PrecisionChoice choice = runtime::choose_precision(setting, device);
  if (setting == choices::Precision::kAuto &&
      ranks.any(choice.precision != choices::Precision::kBf16) &&
      choice.precision == choices::Precision::kBf16)
    choice = {choices::Precision::kFp32, "auto: another rank's device has no bfloat16"};
  if (choice.precision == choices::Precision::kFp16 && !device.is_cuda())
    throw std::invalid_argument("train.precision = fp16 needs a CUDA device, not " + device.str() +
                                " (on CPUs: bf16)");
  logging::info("precision: {} ({})", runtime::precision_name(choice.precision), choice.reason);
  if (ranks.any(!choice.warning.empty()) && ranks.is_main())
    logging::warn("{}", choice.warning.empty() ? "train.precision = bf16 on another rank's CPU, "
                                                 "which has no bfloat16 instructions: it will "
                                                 "emulate them and hold the others back"
                                               : choice.warning);
  return choice.precision;
}

// The resolved config (settings::Schema::to_toml: one `key = value` line each)
// with train.precision = auto replaced by what this run chose, so that the
// run's config.toml and its checkpoints say how it trained.
std::string with_precision(std::string toml, choices::Precision precision) {
  const auto line = [](choices::Precision p) {
    return "\nprecision = \"" + runtime::precision_name(p) + "\"\n";
  };
  const std::string asked = line(choices::Precision::kAuto);
  const size_t at = toml.find(asked);
  if (at != std::string::npos) toml.replace(at, asked.size(), line(precision));
  return toml;
}

// The model as configured, initialised from run.seed (rank 0's initialisation
// is broadcast to all ranks at the start), on `device`. On a CPU the host
// holds what training keeps beside the weights: their gradients and Adam's
// two moments, the moments counted only where the rank updates them all
// (a sharded update keeps a share: at least none). A lower bound: the
// activations and a background save's snapshot come on top.
task::TaskModel initialised_model(const config::RunConfig& cfg, const data::Manifest& manifest,
                                  const torch::Device& device, bool sharded) {
  torch::manual_seed(static_cast<uint64_t>(cfg.run.seed));
  const int copies = device.is_cpu() ? (sharded ? 2 : 4) : 1;
  task::TaskModel model = task::make_task_model(cfg, manifest, copies);
  model.module().to(device);
  return model;
}

// Everything of one rank's training job, built in the constructor in the
// order below; run() is the loop.
class Trainer {
 public:
  Trainer(const config::RunConfig& cfg, const std::string& resolved_toml, const std::string& resume,
          const launch::ProcessInfo& process, Watchdog& watchdog, PreemptionSignals& signals);
  int run();

 private:
  // Where training starts: a checkpoint's state, or a fresh one.
  struct Start {
    checkpoint::TrainState state;
    int64_t checkpoint_step = -1;  // the checkpoint resumed from; -1: none
  };
  std::unique_ptr<RunLock> lock_run_directory();
  Start start_or_resume(const std::string& resume);
  distributed::GradSyncOptions grad_sync_options() const;
  void warn_about_settings() const;
  void log_setup() const;
  bool validate();  // false: early stop (patience exhausted)
  // What this rank writes of a checkpoint of `state` (Checkpointer::RankPart).
  checkpoint::CheckpointPart rank_part(checkpoint::TrainState& state);
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
  const std::unique_ptr<distributed::Communicator> comm_;
  const fs::path run_dir_;
  Watchdog& watchdog_;
  const Watchdog::Watching comm_watch_;  // while it lives, a peer's failure ends the job
  PreemptionSignals& signals_;

  // ---- data, model, Adam, what decides when ----
  const data::Dataset train_set_;
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

Trainer::Trainer(const config::RunConfig& cfg, const std::string& resolved_toml,
                 const std::string& resume, const launch::ProcessInfo& process, Watchdog& watchdog,
                 PreemptionSignals& signals)
    : cfg_(cfg),
      process_(process),
      device_choice_(runtime::agree_on_device(process, cfg.train.device, cfg.dist.backend, ranks_)),
      device_(device_choice_.device),
      precision_(chosen_precision(cfg.train.precision, device_, ranks_)),
      resolved_toml_(with_precision(resolved_toml, precision_)),
      comm_(std::make_unique<distributed::RecordedCommunicator>(
          distributed::make_communicator(device_choice_.backend, device_), recorder_)),
      run_dir_(cfg.run_dir()),
      watchdog_(watchdog),
      comm_watch_(watchdog, comm_.get(), &recorder_),
      signals_(signals),
      train_set_(cfg.data.dir, "train", dataset_options(cfg)),
      batcher_(train_set_.lengths(), batcher_options(cfg)),
      valid_set_(cfg.train.valid_every > 0
                     ? std::make_unique<data::Dataset>(cfg.data.dir, "valid", dataset_options(cfg))
                     : nullptr),
      validator_(valid_set_ ? std::make_unique<Validator>(*valid_set_, cfg.data.batch_tokens,
                                                          cfg.train.valid_every)
                            : nullptr),
      model_(initialised_model(cfg, train_set_.manifest(), device_, grad_sync_options().shard)),
      objective_(task::make_objective(model_, train_set_.manifest(), cfg.optim.label_smoothing)),
      params_(model_.module().parameters()),
      adam_(params_, torch::optim::AdamOptions(cfg.optim.lr)
                         .betas({cfg.optim.beta1, cfg.optim.beta2})
                         .eps(cfg.optim.eps)),
      schedule_(cfg.optim.schedule, cfg.optim.lr, cfg.optim.warmup_steps, cfg.model.d_model),
      checkpoints_(run_dir_.string(), cfg.train.keep_last),
      identity_{process.world_size, cfg.train.accum_steps, data::dataset_id(cfg.data.dir),
                resolved_toml_},
      guard_(cfg.train.max_nonfinite_steps),
      phases_(watchdog, device_),
      replica_check_{cfg.dist.check_every},
      lock_(lock_run_directory()),
      start_(start_or_resume(resume)),
      state_(start_.state),
      grad_sync_(params_, *comm_, grad_sync_options()),
      optimizer_(adam_, grad_sync_),
      loss_scaler_(LossScaler::Options{precision_ == choices::Precision::kFp16}, state_.loss_scale,
                   device_),
      log_(ranks_.is_main()
               ? std::make_unique<MetricsLog>((run_dir_ / "metrics.jsonl").string(), state_.step)
               : nullptr,
           state_.step, cfg.train.max_steps, cfg.train.log_every),
      valid_metrics_(ranks_.is_main() ? std::make_unique<MetricsLog>(
                                            (run_dir_ / "valid.jsonl").string(), state_.step)
                                      : nullptr),
      outcomes_(watchdog, guard_, log_),
      checkpointer_(checkpoints_, ranks_,
                    {cfg.train.save_every, cfg.train.save_every_minutes, built_at_, cfg.optim.lr},
                    start_.checkpoint_step, model_.module(),
                    [this](checkpoint::TrainState& state) { return rank_part(state); }, outcomes_,
                    watchdog, signals),
      train_step_(*objective_, optimizer_, grad_sync_, *comm_, schedule_, loss_scaler_, phases_,
                  device_, {static_cast<uint64_t>(cfg.run.seed), cfg.optim.clip_norm, precision_}),
      batches_(train_set_,
               data::BatchPlan(
                   batcher_, plan_options(cfg, ranks_),
                   {state_.step, state_.epoch, state_.window, state_.window_batch, state_.cursor}),
               static_cast<size_t>(cfg.data.prefetch), /*pin_memory=*/device_.is_cuda()) {
  log_.sums() = state_.log_window;
  warn_about_settings();
}

// The run directory's lock before anything is written there; all ranks stop if it is held.
std::unique_ptr<RunLock> Trainer::lock_run_directory() {
  std::unique_ptr<RunLock> lock;
  launch::on_main(ranks_, [&] {
    launch::make_directories(run_dir_, "the run directory (run.out_dir / run.name)");
    lock = std::make_unique<RunLock>(run_dir_.string());
  });
  // Before any training: a run directory only rank 0's node sees would fail
  // only at the first resume, on the other nodes.
  launch::require_shared_directory(ranks_, process_.node, run_dir_.string(),
                                   "the run directory (run.out_dir / run.name)");
  return lock;
}

Trainer::Start Trainer::start_or_resume(const std::string& resume) {
  Start start;
  // Rank 0 picks the checkpoint (verifying checksums); all load the same one.
  std::string chosen;
  int64_t chosen_step = -1;
  launch::on_main(ranks_, [&] {  // a refusal ends every rank alike (exit 1), not MPI_Abort
    checkpoints_.remove_temporaries();
    chosen = choose_checkpoint(checkpoints_, resume);
    if (!chosen.empty())
      chosen_step =
          checkpoint::CheckpointState::from_json(checkpoint::read_checkpoint_state(chosen))
              .train.step;
  });
  chosen_step = ranks_.broadcast(chosen_step);
  if (chosen_step >= 0 && !ranks_.is_main())
    chosen = resume_from_run(resume) ? checkpoints_.path_of(chosen_step) : resume;

  if (chosen_step >= 0) {
    const auto begin = Clock::now();
    const nlohmann::json saved = checkpoint::read_checkpoint_state(chosen);
    const checkpoint::CheckpointState resumed = checkpoint::CheckpointState::from_json(saved);
    // A checkpoint from before content ids named its dataset by the manifest's sha256.
    const bool same_manifest = data::names_manifest(cfg_.data.dir, resumed.run.dataset_id);
    check_resume_compatible(chosen, saved, resolved_toml_,
                            same_manifest ? resumed.run.dataset_id : identity_.dataset_id);
    checkpoint::load_state_dict(model_.module(), chosen + "/model.pt");
    checkpoint::load_optimizer_state(adam_, model_.module(), chosen);
    start = {resumed.train, chosen_step};
    logging::info(
        "resuming from {} (step {}, epoch {}, batch {} of the epoch; saved by {} ranks "
        "x {} accumulation steps; loaded in {:.1f} s)",
        chosen, start.state.step, start.state.epoch, start.state.cursor, resumed.run.world_size,
        resumed.run.accum_steps, launch::seconds_since(begin));
    if (start.state.window < 0)
      logging::warn(
          "{} was saved before batches came from windows of the shuffled split: the rest of "
          "epoch {} skips its first {} batches of the new order, which is not the order it "
          "began with (some examples of the epoch are seen twice, others not)",
          chosen, start.state.epoch, start.state.cursor);
  }
  // The start is settled and fits: only now is the run directory changed.
  launch::on_main(ranks_, [&] {
    const std::string aside = checkpoints_.set_aside_after(chosen_step);
    if (!aside.empty())
      logging::warn("training from {}: the run's checkpoints of later steps moved to {}",
                    chosen_step >= 0 ? "step " + std::to_string(chosen_step) : "the start", aside);
    launch::write_file(run_dir_ / "config.toml", resolved_toml_);
    checkpoint::clear_finished(run_dir_.string());
  });
  distributed::broadcast_parameters(params_, *comm_);  // a fresh start: rank 0's initialisation
  return start;
}

distributed::GradSyncOptions Trainer::grad_sync_options() const {
  distributed::GradSyncOptions o;
  o.bucket_bytes = static_cast<int64_t>(cfg_.dist.bucket_mb * (1 << 20));
  o.overlap = cfg_.dist.overlap;
  // dist.shard_update = auto: sharded over MPI across ranks (one rank has nothing to share).
  o.shard = cfg_.dist.shard_update == config::ShardUpdate::kAuto
                ? device_choice_.backend == choices::Backend::kMpi && comm_->world_size() > 1
                : cfg_.dist.shard_update == config::ShardUpdate::kOn;
  o.node_shared = cfg_.dist.node_shared_memory;
  return o;
}

void Trainer::warn_about_settings() const {
  if (ranks_.is_main()) {  // the ranks share one plan
    const std::string moved = data::position_moved(
        batcher_, {state_.step, state_.epoch, state_.window, state_.window_batch, state_.cursor});
    if (!moved.empty()) logging::warn("resuming with other data settings: {}", moved);
  }
  // Adam moves each weight by up to about the learning rate per step.
  const double peak = schedule_.at(std::max<int64_t>(1, cfg_.optim.warmup_steps));
  if (peak > 1 && ranks_.is_main())
    logging::warn(
        "the schedule's peak learning rate is {:g} (optim.lr = {:g}, {}): Adam moves "
        "each weight by up to that much per step, and runs diverge far below it",
        peak, cfg_.optim.lr, settings::name_of(config::kScheduleNames, cfg_.optim.schedule));
  if (batcher_.num_skipped() > 0)
    logging::warn("{} training examples are longer than data.max_len = {} and are skipped",
                  batcher_.num_skipped(), cfg_.data.max_len);
}

void Trainer::log_setup() const {
  int64_t num_params = 0;
  for (const auto& p : params_) num_params += p.numel();
  const bool shard = grad_sync_.sharded();
  logging::info(
      "model: {:.2f} M parameters on {}; data: {} training examples, {} ranks x {} "
      "accumulation steps per global batch of {} tokens; {} {} in {} bucket(s){}; Adam: {}",
      num_params / 1e6, device_.str(), batcher_.num_examples(), ranks_.size(),
      cfg_.train.accum_steps, cfg_.data.batch_tokens, comm_->backend(),
      grad_sync_.node_shared() ? "node-shared memory, sharded update"
      : shard                  ? "reduce-scatter, sharded update, allgather"
                               : "allreduce",
      grad_sync_.bucket_layout().size(),
      cfg_.dist.overlap && !grad_sync_.node_shared() ? " overlapped with backward" : "",
      optimizer_.kernel());
  if (shard && cfg_.dist.node_shared_memory && device_.is_cpu() && !grad_sync_.node_shared())
    logging::info(
        "node-shared memory not used: {}; gradients are summed over MPI, in the same order",
        process_.local_size < process_.world_size
            ? text::format("the ranks span several nodes ({} of {} on {})", process_.local_size,
                           process_.world_size, process_.node)
            : std::string("/dev/shm could not hold the buckets"));
}

bool Trainer::validate() {
  watchdog_.beat(state_.step, "validation");
  const ValidationResult r =
      validator_->run(model_.module(), *objective_, *comm_, device_, precision_);
  const bool improved = r.loss < state_.best_valid_loss;
  if (improved) {
    state_.best_valid_loss = r.loss;
    state_.checks_without_improvement = 0;
  } else {
    ++state_.checks_without_improvement;
  }
  if (ranks_.is_main()) {
    logging::info("valid  {:>6} | loss {:.4f} | nll {:.4f} | ppl {:8.3f} | best {:.4f}{}",
                  state_.step, r.loss, r.nll, std::exp(r.nll), state_.best_valid_loss,
                  improved ? " (new best)" : "");
    valid_metrics_->write({{"step", state_.step},
                           {"loss", r.loss},
                           {"nll", r.nll},
                           {"ppl", std::exp(r.nll)},
                           {"tokens", r.tokens},
                           {"best_loss", state_.best_valid_loss}});
  }
  if (improved) checkpointer_.save_best(state_);
  return cfg_.train.patience == 0 || state_.checks_without_improvement < cfg_.train.patience;
}

checkpoint::CheckpointPart Trainer::rank_part(checkpoint::TrainState& state) {
  state.loss_scale = loss_scaler_.state();
  checkpoint::CheckpointPart part;
  part.optimizer = optimizer_.checkpoint_file(model_.module(), ranks_.rank(), ranks_.size());
  if (ranks_.is_main()) {
    state.log_window = log_.sums();
    part.model = checkpoint::named_state(model_.module());
    part.state = checkpoint::CheckpointState{state, identity_}.to_json();
  }
  return part;
}

int Trainer::stop_preempted() {
  if (signals_.requested()) logging::warn("received signal {}", signals_.signal());
  logging::info(
      "preempted: checkpoint of step {} saved; exiting with code {} (run the same "
      "command again: --resume latest is the default)",
      state_.step, kExitPreempted);
  return kExitPreempted;
}

// One step per global batch. A step's outcome is read once the next step is
// queued, or where something needs the model as of this step (outcomes_.settle()).
int Trainer::run() {
  log_setup();
  const auto flags = [&] {  // this rank's, asked just before the step's allreduce
    return StepFlags{signals_.requested(), checkpointer_.clock_due(Clock::now()),
                     checkpointer_.writing(), checkpointer_.failed()};
  };
  model_.module().train();
  const auto start = Clock::now();
  for (;;) {
    std::optional<data::LoadedStep> next;
    {
      auto phase = phases_.enter(Phase::kData, state_.step + 1);
      next = batches_.take();
    }
    if (!next) break;  // max_steps or max_epochs reached, on every rank alike
    recorder_.set_step(next->plan.step);
    outcomes_.queue(train_step_.run(*next, flags));
    const data::PlanPosition after = next->plan.after();
    state_.step = after.step;
    state_.epoch = after.epoch;
    state_.window = after.window;
    state_.window_batch = after.batch;
    state_.cursor = after.cursor;

    const int64_t step = state_.step;
    checkpointer_.in_flight(step);
    if (log_.due(step)) {
      outcomes_.settle();
      log_.write(state_, schedule_.at(step), phases_.take(), *comm_, device_);
    }
    if (replica_check_.due(step)) {
      outcomes_.settle();
      distributed::check_replicas_equal(params_, *comm_, step);
    }
    if (validator_ && validator_->due(step)) {
      outcomes_.settle();
      if (!validate()) {
        logging::info("early stop: {} validations without improvement (train.patience)",
                      state_.checks_without_improvement);
        break;
      }
    }
    if (checkpointer_.after_step(state_)) return stop_preempted();
  }
  outcomes_.settle();

  // ---- finish ----
  distributed::check_replicas_equal(params_, *comm_, state_.step);
  logging::info("parameters identical on all {} ranks (checksum)", ranks_.size());
  checkpointer_.finish(state_);
  if (ranks_.is_main()) checkpoint::mark_finished(run_dir_.string(), state_.step);
  logging::info("training done: {} steps, {} epochs, {:.0f} s", state_.step, state_.epoch,
                launch::seconds_since(start));
  return kExitDone;
}

}  // namespace

int run_training(const config::RunConfig& cfg, const std::string& resolved_toml,
                 const std::string& resume, const launch::ProcessInfo& process, Watchdog& watchdog,
                 PreemptionSignals& signals) {
  watchdog.beat(0, "start-up");
  // Process-wide switches of the kernels, before any CUDA call.
  if (cfg.train.deterministic) runtime::use_deterministic_algorithms();
  runtime::use_tf32(cfg.train.tf32);
  Trainer trainer(cfg, resolved_toml, resume, process, watchdog, signals);
  return trainer.run();
}

}  // namespace train
