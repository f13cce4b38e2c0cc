// The training loop, top to bottom (DESIGN.md, "the global batch"):
//
//   for each global batch (one optimizer step):
//     this rank's micro-batches = split(batch, world × accum)[a × world + rank]
//     for each micro-batch: forward, loss sum, backward (gradients add up;
//       during the last one GradSync allreduces gradient buckets as they fill)
//     allreduce loss and token sums; wait for the gradient buckets
//     gradients /= target tokens of the whole global batch   (exactly once)
//     clip by global norm; skip the update if loss or norm is not finite;
//       else set the scheduled learning rate, Adam step
//     log / check the replicas agree / validate / checkpoint
//     a preemption signal on any rank (carried in the step's allreduce):
//       checkpoint, exit kExitPreempted
//
// Resume state is (step, epoch, cursor) plus weights and Adam moments: the
// data order derives from (seed, epoch), dropout from (seed, step, part), so a
// resumed run continues bit for bit (same world size) or on the same global
// batches (another world size).
#include "trainer/train/training.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

#include "data_pipeline/batcher.h"
#include "data_pipeline/batch_plan.h"
#include "data_pipeline/loader/collate.h"
#include "data_pipeline/loader/prefetcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/random.h"
#include "data_pipeline/sha256.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"
#include "trainer/dist/consistency.h"
#include "trainer/dist/grad_sync.h"
#include "trainer/dist/make_communicator.h"
#include "trainer/model/transformer.h"
#include "trainer/train/objective.h"
#include "trainer/train/checkpoint.h"
#include "trainer/train/finished_marker.h"
#include "trainer/train/exit_codes.h"
#include "trainer/train/label_smoothing.h"
#include "trainer/train/lr_schedule.h"
#include "trainer/train/metrics_log.h"
#include "trainer/train/numerics_guard.h"
#include "trainer/train/preemption.h"
#include "trainer/train/resume.h"
#include "trainer/train/state_dict.h"
#include "trainer/train/validation.h"
#include "trainer/train/watchdog.h"

namespace train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Dropout masks depend on (seed, step, micro-batch part) only: the same part
// of the same step draws the same masks whichever rank trains it, and a
// resumed run needs no generator state to replay them.
void seed_dropout(uint64_t seed, int64_t step, int64_t part) {
  torch::manual_seed(data::mix_seed(data::mix_seed(seed, static_cast<uint64_t>(step)),
                                    static_cast<uint64_t>(part)));
}

void set_learning_rate(torch::optim::Adam& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

// Where a rank's step time goes (seconds). On a GPU these are host times of
// asynchronous work; on the CPU they are the work itself.
struct PhaseTimes {
  double data = 0;      // reading and collating micro-batches
  double forward = 0;   // forward pass and loss
  double backward = 0;  // backward (incl. starting overlapped allreduces)
  double comm = 0;      // blocked waiting for collectives
  double update = 0;    // scaling, clipping, optimizer step
};

// Sums of one log interval, to report means and throughput. The sums are
// saved in checkpoints, so a run resumed mid-interval logs the same means.
struct Window {
  double smoothed = 0, nll = 0, tokens = 0, grad_norm = 0;
  int64_t steps = 0;
  PhaseTimes times;
  Clock::time_point start = Clock::now();

  nlohmann::json sums() const {
    return {{"smoothed", smoothed}, {"nll", nll}, {"tokens", tokens}, {"grad_norm", grad_norm},
            {"steps", steps}};
  }
  static Window from_sums(const nlohmann::json& j) {
    Window w;
    w.smoothed = j.at("smoothed");
    w.nll = j.at("nll");
    w.tokens = j.at("tokens");
    w.grad_norm = j.at("grad_norm");
    w.steps = j.at("steps");
    return w;
  }
};

// The interval's phase times as shares of its wall time, averaged over ranks.
nlohmann::json phase_shares(const PhaseTimes& t, double wall_seconds, dist::Communicator& comm,
                            const torch::Device& device) {
  torch::Tensor sums = torch::tensor({t.data, t.forward, t.backward, t.comm, t.update},
                                     torch::dtype(torch::kDouble).device(device));
  comm.allreduce_sum(sums);
  sums = sums.cpu() / (comm.world_size() * wall_seconds);
  return {{"data", sums[0].item<double>()}, {"forward", sums[1].item<double>()},
          {"backward", sums[2].item<double>()}, {"comm_wait", sums[3].item<double>()},
          {"update", sums[4].item<double>()}};
}

// The largest resident set size of any rank so far (MiB).
double peak_rss_mb(dist::Communicator& comm, const torch::Device& device) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const torch::Tensor all =
      comm.allgather(torch::tensor({usage.ru_maxrss / 1024.0}, torch::dtype(torch::kDouble).device(device)));
  return all.max().cpu().item<double>();
}

// Rank 0's value on every rank.
int64_t broadcast_value(int64_t value, dist::Communicator& comm, const torch::Device& device) {
  torch::Tensor t = torch::tensor({value}, torch::dtype(torch::kLong).device(device));
  comm.broadcast(t, 0);
  return t.cpu().item<int64_t>();
}

// Layout of the per-step allreduce: loss sums and the flags every rank must agree on.
enum StepSum { kSmoothed, kNll, kTokens, kPreempt, kSaveTime, kNumStepSums };

// Everything of one rank's training job; run() is the loop.
class Trainer {
 public:
  Trainer(const config::RunConfig& cfg, const std::string& resolved_toml,
          const launch::ProcessInfo& process, Watchdog& watchdog)
      : cfg_(cfg), resolved_toml_(resolved_toml), rank_(process.rank), world_(process.world_size),
        device_(runtime::select_device(process)),
        precision_(runtime::parse_precision(cfg.train.precision)),
        comm_(dist::make_communicator(cfg.dist.backend, device_)),
        run_dir_(cfg.run_dir()), watchdog_(watchdog),
        train_set_(cfg.data.dir, "train", dataset_options(cfg)),
        batcher_(train_set_.lengths(), batcher_options(cfg)),
        schedule_(cfg.optim.schedule, cfg.optim.lr, cfg.optim.warmup_steps, cfg.model.d_model),
        checkpoints_(run_dir_.string(), cfg.train.keep_last),
        manifest_sha_(data::sha256_file(fs::path(cfg.data.dir) / data::kManifestFile)),
        guard_(cfg.train.max_nonfinite_steps) {
    const data::Manifest& manifest = train_set_.manifest();
    if (batcher_.num_skipped() > 0)
      spdlog::warn("{} training examples are longer than data.max_len = {} and are skipped",
                   batcher_.num_skipped(), cfg.data.max_len);
    if (cfg.train.valid_every > 0) {
      valid_set_ = std::make_unique<data::Dataset>(cfg.data.dir, "valid", dataset_options(cfg));
      validator_ = std::make_unique<Validator>(*valid_set_, cfg.data.batch_tokens);
    }
    torch::manual_seed(static_cast<uint64_t>(cfg.run.seed));
    objective_ = make_objective(cfg, manifest);
    objective_->model().to(device_);
    params_ = objective_->model().parameters();
    optimizer_ = std::make_unique<torch::optim::Adam>(
        params_, torch::optim::AdamOptions(cfg.optim.lr)
                     .betas({cfg.optim.beta1, cfg.optim.beta2})
                     .eps(cfg.optim.eps));
  }

  int run(const std::string& resume);

 private:
  static data::DatasetOptions dataset_options(const config::RunConfig& cfg) {
    data::DatasetOptions o;
    o.verify_checksums = cfg.data.verify_checksums;
    return o;
  }
  static data::BatcherOptions batcher_options(const config::RunConfig& cfg) {
    data::BatcherOptions o;
    o.batch_tokens = cfg.data.batch_tokens;
    o.max_len = cfg.data.max_len;
    o.seed = static_cast<uint64_t>(cfg.run.seed);
    return o;
  }

  void start_or_resume(const std::string& resume);
  // One optimizer step on the plan's next global batch; returns the step's
  // allreduced sums, or an undefined tensor when the plan is done.
  torch::Tensor train_step(data::Prefetcher& prefetch, double& grad_norm, bool& updated);
  void log(double lr);
  bool validate();  // false: early stop (patience exhausted)
  void save();

  const config::RunConfig& cfg_;
  const std::string resolved_toml_;
  const int64_t rank_, world_;
  const torch::Device device_;
  const runtime::Precision precision_;
  const std::unique_ptr<dist::Communicator> comm_;
  const fs::path run_dir_;
  Watchdog& watchdog_;
  PreemptionSignals signals_;

  const data::Dataset train_set_;
  const data::Batcher batcher_;
  std::unique_ptr<data::Dataset> valid_set_;
  std::unique_ptr<Validator> validator_;

  std::unique_ptr<Objective> objective_;  // the model and its loss
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<dist::GradSync> grad_sync_;
  const LrSchedule schedule_;
  const Checkpoints checkpoints_;
  const std::string manifest_sha_;
  NumericsGuard guard_;
  std::unique_ptr<MetricsLog> metrics_, valid_metrics_;

  // The resume state (saved in state.json).
  int64_t step_ = 0, epoch_ = 0, cursor_ = 0;  // cursor: next global batch of the epoch
  double best_valid_loss_ = std::numeric_limits<double>::infinity();
  int64_t checks_without_improvement_ = 0;
  Window window_;

  int64_t last_saved_step_ = -1;
  Clock::time_point last_save_time_ = Clock::now();
  Clock::time_point start_ = Clock::now();
};

void Trainer::start_or_resume(const std::string& resume) {
  // Rank 0 picks the checkpoint (verifying checksums); all load the same one.
  std::string chosen;
  int64_t chosen_step = -1;
  if (rank_ == 0) {
    checkpoints_.remove_temporaries();
    chosen = choose_checkpoint(checkpoints_, resume);
    if (!chosen.empty()) chosen_step = read_checkpoint_state(chosen).at("step").get<int64_t>();
  }
  chosen_step = broadcast_value(chosen_step, *comm_, device_);
  if (chosen_step >= 0 && rank_ != 0)
    chosen = resume == "auto" ? checkpoints_.path_of(chosen_step) : resume;

  if (chosen_step >= 0) {
    const auto begin = Clock::now();
    const nlohmann::json state = read_checkpoint_state(chosen);
    check_resume_compatible(state, resolved_toml_, manifest_sha_);
    load_state_dict(objective_->model(), chosen + "/model.pt");
    torch::load(*optimizer_, chosen + "/optimizer.pt");
    step_ = state.at("step");
    epoch_ = state.at("epoch");
    cursor_ = state.at("cursor");
    best_valid_loss_ = state.at("best_valid_loss").is_null()
                           ? std::numeric_limits<double>::infinity()
                           : state.at("best_valid_loss").get<double>();
    checks_without_improvement_ = state.at("checks_without_improvement");
    window_ = Window::from_sums(state.at("log_window"));
    last_saved_step_ = step_;
    spdlog::info("resuming from {} (step {}, epoch {}, batch {} of the epoch; saved by {} ranks "
                 "x {} accumulation steps; loaded in {:.1f} s)", chosen, step_, epoch_, cursor_,
                 state.at("world_size").get<int64_t>(), state.at("accum_steps").get<int64_t>(),
                 seconds_since(begin));
  } else if (rank_ == 0 && resume == "none" && !checkpoints_.list().empty()) {
    spdlog::warn("--resume none: starting afresh; the run's existing checkpoints will be pruned");
  }
  dist::broadcast_parameters(params_, *comm_);  // a fresh start: rank 0's initialisation

  if (rank_ == 0) {
    metrics_ = std::make_unique<MetricsLog>((run_dir_ / "metrics.jsonl").string(), step_);
    valid_metrics_ = std::make_unique<MetricsLog>((run_dir_ / "valid.jsonl").string(), step_);
  }
}

torch::Tensor Trainer::train_step(data::Prefetcher& prefetch, double& grad_norm, bool& updated) {
  // Forward and backward over this rank's micro-batches; gradients add up.
  grad_sync_->zero_grad();
  auto sums = torch::zeros({kNumStepSums}, torch::dtype(torch::kDouble).device(device_));
  for (int64_t a = 0; a < cfg_.train.accum_steps; ++a) {
    watchdog_.beat(step_, "data");
    auto phase = Clock::now();
    std::optional<data::LoadedMicroBatch> next = prefetch.take();
    if (!next) return {};  // every rank's plan ends at the same step
    step_ = next->plan.step;
    epoch_ = next->plan.epoch;
    cursor_ = next->plan.cursor + 1;
    const data::Batch batch = next->batch.to(device_);
    window_.times.data += seconds_since(phase);
    grad_sync_->prepare(next->plan.last_of_step);
    if (batch.num_tgt_tokens == 0) continue;  // an empty part adds nothing
    watchdog_.beat(step_, "forward/backward");
    phase = Clock::now();
    seed_dropout(static_cast<uint64_t>(cfg_.run.seed), step_, next->plan.part);
    LossSums s;
    {
      runtime::AutocastScope autocast(precision_, device_);
      s = objective_->loss(batch);
    }
    window_.times.forward += seconds_since(phase);
    phase = Clock::now();
    s.smoothed.backward();
    sums[kSmoothed] += s.smoothed.detach().to(torch::kDouble);
    sums[kNll] += s.nll.to(torch::kDouble);
    sums[kTokens] += static_cast<double>(s.tokens);
    window_.times.backward += seconds_since(phase);
  }
  // Flags ride along: a signal on any rank, rank 0's clock for timed saves.
  if (signals_.requested()) sums[kPreempt] += 1.0;
  if (rank_ == 0 && cfg_.train.save_every_minutes > 0 &&
      seconds_since(last_save_time_) >= 60 * cfg_.train.save_every_minutes)
    sums[kSaveTime] += 1.0;

  // The global batch: sum over ranks, divide once by its target tokens.
  watchdog_.beat(step_, "allreduce");
  auto phase = Clock::now();
  grad_sync_->synchronize();  // first: the gradient buckets' collectives come in a fixed order
  comm_->allreduce_sum(sums);
  sums = sums.cpu();
  window_.times.comm += seconds_since(phase);

  watchdog_.beat(step_, "update");
  phase = Clock::now();
  const double tokens = sums[kTokens].item<double>();
  const double max_norm =
      cfg_.optim.clip_norm > 0 ? cfg_.optim.clip_norm : std::numeric_limits<double>::infinity();
  grad_norm = grad_sync_->scale_and_clip(tokens, max_norm);
  updated = guard_.accept(step_, sums[kSmoothed].item<double>() / tokens, grad_norm);
  if (updated) {
    set_learning_rate(*optimizer_, schedule_.at(step_));
    optimizer_->step();
  }
  window_.times.update += seconds_since(phase);
  return sums;
}

void Trainer::log(double lr) {
  const double wall = seconds_since(window_.start);
  const nlohmann::json shares = phase_shares(window_.times, wall, *comm_, device_);  // collective
  const double rss_mb = peak_rss_mb(*comm_, device_);                               // collective
  if (rank_ == 0 && window_.tokens > 0) {
    const double loss = window_.smoothed / window_.tokens, nll = window_.nll / window_.tokens;
    const double grad_norm = window_.grad_norm / std::max<int64_t>(1, window_.steps);
    const double tokens_per_s = window_.tokens / wall;
    spdlog::info("step {:>6} | epoch {:>3} | loss {:.4f} | nll {:.4f} | ppl {:8.3f} | lr {:.3e} | "
                 "gnorm {:.3f} | {:.0f} tok/s | comm wait {:.1f}% | {:.0f} s",
                 step_, epoch_, loss, nll, std::exp(nll), lr, grad_norm, tokens_per_s,
                 100 * shares["comm_wait"].get<double>(), seconds_since(start_));
    metrics_->write({{"step", step_}, {"epoch", epoch_}, {"loss", loss}, {"nll", nll},
                     {"ppl", std::exp(nll)}, {"lr", lr}, {"grad_norm", grad_norm},
                     {"tokens_per_s", tokens_per_s}, {"time_share", shares}, {"peak_rss_mb", rss_mb},
                     {"elapsed_s", seconds_since(start_)}});
  }
  window_ = Window();
}

bool Trainer::validate() {
  watchdog_.beat(step_, "validation");
  const ValidationResult r = validator_->run(*objective_, *comm_, device_, precision_);
  const bool improved = r.loss < best_valid_loss_;
  if (improved) {
    best_valid_loss_ = r.loss;
    checks_without_improvement_ = 0;
  } else {
    ++checks_without_improvement_;
  }
  if (rank_ == 0) {
    spdlog::info("valid  {:>6} | loss {:.4f} | nll {:.4f} | ppl {:8.3f} | best {:.4f}{}", step_,
                 r.loss, r.nll, std::exp(r.nll), best_valid_loss_,
                 improved ? " (new best)" : "");
    valid_metrics_->write({{"step", step_}, {"loss", r.loss}, {"nll", r.nll},
                           {"ppl", std::exp(r.nll)}, {"tokens", r.tokens},
                           {"best_loss", best_valid_loss_}});
  }
  if (improved) {
    save();
    if (rank_ == 0) checkpoints_.mark_best(checkpoints_.resolve("latest"));
  }
  return cfg_.train.patience == 0 || checks_without_improvement_ < cfg_.train.patience;
}

// Rank 0 writes; the others wait at the barrier, so that no rank runs ahead
// into the next step's collectives (or exits) while the checkpoint is written.
void Trainer::save() {
  if (last_saved_step_ == step_) return;
  watchdog_.beat(step_, "checkpoint");
  if (rank_ == 0) {
    const nlohmann::json state = {
        {"step", step_}, {"epoch", epoch_}, {"cursor", cursor_}, {"world_size", world_},
        {"accum_steps", cfg_.train.accum_steps}, {"dataset_manifest_sha256", manifest_sha_},
        {"best_valid_loss", std::isfinite(best_valid_loss_) ? nlohmann::json(best_valid_loss_)
                                                            : nlohmann::json()},
        {"checks_without_improvement", checks_without_improvement_},
        {"log_window", window_.sums()},
        {"random_state", "none needed: data order from (run.seed, epoch), dropout from "
                         "(run.seed, step, micro-batch)"},
        {"config", resolved_toml_}};
    const auto begin = Clock::now();
    const std::string dir = checkpoints_.save(step_, objective_->model(), *optimizer_, state);
    spdlog::info("checkpoint {} ({:.1f} s)", dir, seconds_since(begin));
  }
  comm_->barrier();
  last_saved_step_ = step_;
  last_save_time_ = Clock::now();
}

int Trainer::run(const std::string& resume) {
  if (rank_ == 0) {
    fs::create_directories(run_dir_);
    std::ofstream(run_dir_ / "config.toml") << resolved_toml_;
    clear_finished(run_dir_.string());
  }
  start_or_resume(resume);
  dist::GradSyncOptions sync_options;
  sync_options.bucket_bytes = static_cast<int64_t>(cfg_.dist.bucket_mb * (1 << 20));
  sync_options.overlap = cfg_.dist.overlap;
  grad_sync_ = std::make_unique<dist::GradSync>(params_, *comm_, sync_options);
  int64_t num_params = 0;
  for (const auto& p : params_) num_params += p.numel();
  spdlog::info("model: {:.2f} M parameters on {}; data: {} training examples, {} ranks x {} "
               "accumulation steps per global batch of {} tokens; {} allreduce in {} bucket(s){}",
               num_params / 1e6, device_.str(), batcher_.num_examples(), world_,
               cfg_.train.accum_steps, cfg_.data.batch_tokens, comm_->backend(),
               grad_sync_->bucket_layout().size(),
               cfg_.dist.overlap ? " overlapped with backward" : "");

  objective_->model().train();
  start_ = Clock::now();
  window_.start = start_;
  data::PlanOptions plan;
  plan.world_size = world_;
  plan.rank = rank_;
  plan.accum_steps = cfg_.train.accum_steps;
  plan.max_steps = cfg_.train.max_steps;
  plan.max_epochs = cfg_.train.max_epochs;
  data::Prefetcher prefetch(train_set_, data::BatchPlan(batcher_, plan, step_, epoch_, cursor_),
                            static_cast<size_t>(cfg_.data.prefetch));
  for (;;) {
    double grad_norm = 0;
    bool updated = false;
    const torch::Tensor sums = train_step(prefetch, grad_norm, updated);
    if (!sums.defined()) break;  // max_steps or max_epochs reached
    if (updated) {
      window_.smoothed += sums[kSmoothed].item<double>();
      window_.nll += sums[kNll].item<double>();
      window_.tokens += sums[kTokens].item<double>();
      window_.grad_norm += grad_norm;
      ++window_.steps;
    }

    if (step_ % cfg_.train.log_every == 0 || step_ == cfg_.train.max_steps)
      log(schedule_.at(step_));
    if (cfg_.dist.check_every > 0 && step_ % cfg_.dist.check_every == 0)
      dist::check_replicas_equal(params_, *comm_, step_);
    if (validator_ && step_ % cfg_.train.valid_every == 0 && !validate()) {
      spdlog::info("early stop: {} validations without improvement (train.patience)",
                   checks_without_improvement_);
      break;
    }
    const bool preempted = sums[kPreempt].item<double>() > 0;
    if (preempted || sums[kSaveTime].item<double>() > 0 ||
        (cfg_.train.save_every > 0 && step_ % cfg_.train.save_every == 0))
      save();
    if (preempted) {
      if (signals_.requested()) spdlog::warn("received signal {}", signals_.signal());
      spdlog::info("preempted: checkpoint of step {} saved; exiting with code {} (resume with "
                   "--resume auto)", step_, kExitPreempted);
      return kExitPreempted;
    }
  }
  dist::check_replicas_equal(params_, *comm_, step_);
  spdlog::info("parameters identical on all {} ranks (checksum)", world_);
  save();
  if (rank_ == 0) mark_finished(run_dir_.string(), step_);
  spdlog::info("training done: {} steps, {} epochs, {:.0f} s", step_, epoch_,
               seconds_since(start_));
  return kExitDone;
}

}  // namespace

int run_training(const config::RunConfig& cfg, const std::string& resolved_toml,
                 const std::string& resume, const launch::ProcessInfo& process,
                 Watchdog& watchdog) {
  watchdog.beat(0, "start-up");
  Trainer trainer(cfg, resolved_toml, process, watchdog);
  return trainer.run(resume);
}

}  // namespace train
