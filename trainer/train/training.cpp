// The training job of one rank, top to bottom: set up (what it holds:
// train/trainer.h; where it starts: train/trainer_start.cpp), then one
// optimizer step per global batch (train/step.h), then finish. Between steps:
// the log line, the replicas check, validation, checkpoints and preemption.
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
#include <cmath>
#include <optional>

#include "base/logging.h"
#include "base/seconds.h"
#include "base/text_format.h"
#include "data_pipeline/batch_plan.h"
#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/node_check.h"
#include "launch/restart.h"
#include "trainer/checkpoint/finished_marker.h"
#include "trainer/checkpoint/state_dict.h"
#include "trainer/distributed/consistency.h"
#include "trainer/distributed/make_communicator.h"
#include "trainer/distributed/recorded_communicator.h"
#include "trainer/runtime/determinism.h"
#include "trainer/runtime/precision.h"
#include "trainer/train/exit_codes.h"
#include "trainer/train/run_setup.h"
#include "trainer/train/trainer.h"

namespace train {

Trainer::Trainer(const config::RunConfig& cfg, const checkpoint::CheckpointChoice& resume,
                 const launch::ProcessInfo& process, Watchdog& watchdog, PreemptionSignals& signals)
    : cfg_(cfg),
      process_(process),
      device_choice_(runtime::agree_on_device(process, cfg.train.device, cfg.dist.backend, ranks_)),
      device_(device_choice_.device),
      precision_(chosen_precision(cfg.train.precision, device_, ranks_)),
      resolved_toml_(saved_config(cfg, precision_)),
      survivor_(process.rank, cfg.dist.peer_lost_after_s, signals),
      comm_(std::make_unique<distributed::RecordedCommunicator>(
          distributed::make_communicator(device_choice_.backend, device_), recorder_, &survivor_)),
      run_dir_(cfg.run_dir()),
      watchdog_(watchdog),
      comm_watch_(watchdog, comm_.get(), &recorder_, &survivor_),
      signals_(signals),
      train_set_(data::open_checked_on_each_node(cfg.data.dir, "train", dataset_options(cfg),
                                                 ranks_, process_)),
      batcher_(train_set_->lengths(), batcher_options(cfg)),
      valid_set_(cfg.train.valid_every > 0
                     ? data::open_checked_on_each_node(cfg.data.dir, "valid", dataset_options(cfg),
                                                       ranks_, process_)
                     : nullptr),
      validator_(valid_set_ ? std::make_unique<Validator>(*valid_set_, cfg.data.batch_tokens,
                                                          cfg.train.valid_every)
                            : nullptr),
      model_(initialised_model(cfg, train_set_->manifest(), device_, grad_sync_options().shard)),
      objective_(task::make_objective(model_, train_set_->manifest(), cfg.optim.label_smoothing)),
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
           state_.step, cfg.train.max_steps, cfg.train.log_every,
           ranks_.gather("host " + process.node + ", " + device_.str()),  // collective
           cfg.train.slow_rank_factor),
      valid_metrics_(ranks_.is_main() ? std::make_unique<MetricsLog>(
                                            (run_dir_ / "valid.jsonl").string(), state_.step)
                                      : nullptr),
      outcomes_(watchdog, guard_, log_),
      checkpointer_(
          checkpoints_, ranks_,
          {cfg.train.save_every, cfg.train.save_every_minutes, built_at_, cfg.optim.lr},
          start_.checkpoint_step, model_.module(),
          [this](checkpoint::TrainState& state) { return rank_part(state, ranks_.rank()); },
          outcomes_, watchdog, signals, survivor_),
      train_step_(*objective_, optimizer_, grad_sync_, *comm_, schedule_, loss_scaler_, phases_,
                  device_, {static_cast<uint64_t>(cfg.run.seed), cfg.optim.clip_norm, precision_}),
      batches_(*train_set_, data::BatchPlan(batcher_, plan_options(cfg, ranks_), state_),
               static_cast<size_t>(cfg.data.prefetch), /*pin_memory=*/device_.is_cuda()) {
  log_.sums() = state_.log_window;
  warn_about_settings();
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
    const std::string moved = data::position_moved(batcher_, state_);
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

void Trainer::log_restart() {
  const std::optional<launch::Restart> restart = launch::restart_from_environment();
  if (!restart || !ranks_.is_main()) return;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double since = now - restart->failed_at;
  logging::warn(
      "in-job restart {} after the run on the nodes before ended with exit {} {:.1f} s ago{}: "
      "{} ranks resume from step {}",
      restart->number, restart->failed_exit, since,
      restart->lost_nodes.empty() ? std::string(" (every node answered)")
                                  : " (lost: " + restart->lost_nodes + ")",
      ranks_.size(), state_.step);
  log_.note("restart", {{"number", restart->number},
                        {"lost_nodes", restart->lost_nodes},
                        {"failed_exit", restart->failed_exit},
                        {"resumed_step", state_.step},
                        {"world_size", ranks_.size()},
                        {"seconds_from_failure_to_start", since}});
}

bool Trainer::validate() {
  // The best loss changes after the validation's allreduce: no survivor
  // saves the replica meanwhile (it would hold step n without step n's validation).
  const SurvivorSave::Keeping keeping(survivor_);
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

checkpoint::CheckpointPart Trainer::rank_part(checkpoint::TrainState& state, int rank) {
  state.loss_scale = loss_scaler_.state();
  checkpoint::CheckpointPart part;
  part.optimizer = optimizer_.checkpoint_file(model_.module(), rank, ranks_.size());
  if (rank == 0) {
    state.log_window = log_.sums();
    part.model = checkpoint::named_state(model_.module());
    part.state = checkpoint::CheckpointState{state, identity_}.to_json();
  }
  return part;
}

// Rank 0's part of a checkpoint is all of it where the update is not sharded.
SurvivorSave::Replica Trainer::replica() {
  return {&checkpoints_, [this] { return state_.step; },
          [this] {
            outcomes_.settle();  // the last step's outcome, into the log interval saved
            return checkpoints_.save({state_.step, rank_part(state_, 0)});
          }};
}

std::string Trainer::survivor_unavailable() const {
  if (device_.is_cuda())
    return "on a GPU the host queues a step ahead of the device, whose update may wait behind a "
           "collective that never ends: no replica is known whole";
  if (grad_sync_.sharded())
    return "the update is sharded (dist.shard_update): each rank holds only its shard of Adam's "
           "moments (dist.shard_update = off lets a survivor save)";
  return "";
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
  log_restart();
  const std::string unavailable = survivor_unavailable();
  survivor_.unavailable(unavailable);
  std::optional<SurvivorSave::Holding> holding;  // the replica, but while waiting for peers
  if (unavailable.empty()) holding.emplace(survivor_, replica());
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
    static_cast<data::PlanPosition&>(state_) = next->plan.after();  // where the plan stands now

    const int64_t step = state_.step;
    checkpointer_.in_flight(step);
    if (log_.due(step)) {
      outcomes_.settle();
      watchdog_.beat("the interval log's allgather");
      log_.write(state_, schedule_.at(step), phases_.take(), *comm_, device_);
    }
    if (replica_check_.due(step)) {
      outcomes_.settle();
      watchdog_.beat("the replica check");
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
  logging::info("training done: {} steps, {} epochs, {:.0f} s; examples ledger {}", state_.step,
                state_.epoch, base::seconds_since(start), state_.ledger);
  return kExitDone;
}

int run_training(const config::RunConfig& cfg, const checkpoint::CheckpointChoice& resume,
                 const launch::ProcessInfo& process, Watchdog& watchdog,
                 PreemptionSignals& signals) {
  watchdog.beat(0, "start-up");
  // Process-wide switches of the kernels, before any CUDA call.
  if (cfg.train.deterministic) runtime::use_deterministic_algorithms();
  runtime::use_tf32(cfg.train.tf32);
  Trainer trainer(cfg, resume, process, watchdog, signals);
  return trainer.run();
}

}  // namespace train
