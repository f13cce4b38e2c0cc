// The training loop, top to bottom (DESIGN.md, "the global batch"):
//
//   for each global batch (one optimizer step):
//     this rank's micro-batches = split(batch, world × accum)[a × world + rank]
//     for each micro-batch: forward, loss sum, backward (gradients add up;
//       during the last one GradSync allreduces gradient buckets as they fill)
//     allreduce loss and token sums; wait for the gradient buckets
//     gradients /= target tokens of the whole global batch   (exactly once)
//     clip by global norm, set the scheduled learning rate, Adam step
//     log / check the replicas agree / checkpoint
#include "trainer/train/training.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

#include "data_pipeline/batcher.h"
#include "data_pipeline/collate.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/random.h"
#include "data_pipeline/sha256.h"
#include "launch/device.h"
#include "trainer/dist/consistency.h"
#include "trainer/dist/grad_sync.h"
#include "trainer/dist/make_communicator.h"
#include "trainer/model/transformer.h"
#include "trainer/train/batch_loss.h"
#include "trainer/train/checkpoint.h"
#include "trainer/train/label_smoothing.h"
#include "trainer/train/lr_schedule.h"
#include "trainer/train/metrics_log.h"

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

data::Batch load_batch(const data::Dataset& dataset, const data::GlobalBatch& indices) {
  std::vector<data::Example> examples;
  examples.reserve(indices.size());
  for (int64_t i : indices) examples.push_back(dataset.get(i));
  return data::collate(examples, dataset.manifest().special);
}

void set_learning_rate(torch::optim::Adam& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

// Where a rank's step time goes (seconds). On a GPU these are host times of
// asynchronous work; on the CPU they are the work itself.
struct PhaseTimes {
  double data = 0;     // reading and collating micro-batches
  double compute = 0;  // forward + backward (incl. starting overlapped allreduces)
  double comm = 0;     // blocked waiting for collectives
  double update = 0;   // scaling, clipping, optimizer step
};

// Sums of one log interval, to report means and throughput.
struct Window {
  double smoothed = 0, nll = 0, tokens = 0, grad_norm = 0;
  int64_t steps = 0;
  PhaseTimes times;
  Clock::time_point start = Clock::now();
};

// The interval's phase times as shares of its wall time, averaged over ranks.
nlohmann::json phase_shares(const PhaseTimes& t, double wall_seconds, dist::Communicator& comm,
                            const torch::Device& device) {
  torch::Tensor sums = torch::tensor({t.data, t.compute, t.comm, t.update},
                                     torch::dtype(torch::kDouble).device(device));
  comm.allreduce_sum(sums);
  sums = sums.cpu() / (comm.world_size() * wall_seconds);
  return {{"data", sums[0].item<double>()}, {"compute", sums[1].item<double>()},
          {"comm_wait", sums[2].item<double>()}, {"update", sums[3].item<double>()}};
}

}  // namespace

void run_training(const config::RunConfig& cfg, const std::string& resolved_toml,
                  const launch::ProcessInfo& process) {
  const torch::Device device = launch::select_device(process);
  const std::unique_ptr<dist::Communicator> comm = dist::make_communicator(cfg.dist.backend, device);
  const int64_t world = process.world_size, rank = process.rank;
  const fs::path run_dir = cfg.run_dir();
  if (rank == 0) {
    fs::create_directories(run_dir);
    std::ofstream(run_dir / "config.toml") << resolved_toml;
  }

  // ---- data: the epoch's global batches, this rank's share of each --------
  const data::Dataset train_set(cfg.data.dir, "train");
  const data::Manifest& manifest = train_set.manifest();
  data::BatcherOptions batching;
  batching.batch_tokens = cfg.data.batch_tokens;
  batching.max_len = cfg.data.max_len;
  batching.seed = static_cast<uint64_t>(cfg.run.seed);
  const data::Batcher batcher(train_set.lengths(), batching);
  if (batcher.num_skipped() > 0)
    spdlog::warn("{} training examples are longer than data.max_len = {} and are skipped",
                 batcher.num_skipped(), cfg.data.max_len);
  const int64_t parts = world * cfg.train.accum_steps;

  // ---- model, loss, optimizer, schedule ----------------------------------
  torch::manual_seed(static_cast<uint64_t>(cfg.run.seed));
  model::EncoderDecoder model(
      cfg.model_config(manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special.pad));
  model->to(device);
  const std::vector<torch::Tensor> params = model->parameters();
  dist::broadcast_parameters(params, *comm);
  dist::GradSyncOptions sync_options;
  sync_options.bucket_bytes = static_cast<int64_t>(cfg.dist.bucket_mb * (1 << 20));
  sync_options.overlap = cfg.dist.overlap;
  dist::GradSync grad_sync(params, *comm, sync_options);
  int64_t num_params = 0;
  for (const auto& p : params) num_params += p.numel();

  const LabelSmoothingLoss loss(manifest.tgt_vocab_size, manifest.special.pad,
                                cfg.optim.label_smoothing);
  torch::optim::Adam optimizer(params, torch::optim::AdamOptions(cfg.optim.lr)
                                           .betas({cfg.optim.beta1, cfg.optim.beta2})
                                           .eps(cfg.optim.eps));
  const LrSchedule schedule(cfg.optim.schedule, cfg.optim.lr, cfg.optim.warmup_steps,
                            cfg.model.d_model);
  const Checkpoints checkpoints(run_dir.string());
  const std::string manifest_sha = data::sha256_file(fs::path(cfg.data.dir) / data::kManifestFile);
  std::unique_ptr<MetricsLog> metrics;
  if (rank == 0) metrics = std::make_unique<MetricsLog>((run_dir / "metrics.jsonl").string());

  spdlog::info("model: {:.2f} M parameters on {}; data: {} training examples, {} ranks x {} "
               "accumulation steps per global batch of {} tokens; {} allreduce in {} bucket(s){}",
               num_params / 1e6, device.str(), batcher.num_examples(), world,
               cfg.train.accum_steps, cfg.data.batch_tokens, comm->backend(),
               grad_sync.bucket_layout().size(), cfg.dist.overlap ? " overlapped with backward" : "");

  // ---- the loop ------------------------------------------------------------
  int64_t step = 0, epoch = 0, cursor = 0;  // cursor: next global batch of the epoch
  std::vector<data::GlobalBatch> batches = batcher.epoch(epoch);
  const auto save = [&] {
    const nlohmann::json state = {{"step", step}, {"epoch", epoch}, {"cursor", cursor},
                                  {"world_size", world}, {"accum_steps", cfg.train.accum_steps},
                                  {"dataset_manifest_sha256", manifest_sha},
                                  {"config", resolved_toml}};
    if (rank == 0) spdlog::info("checkpoint {}", checkpoints.save(step, *model, optimizer, state));
  };

  model->train();
  const auto start = Clock::now();
  Window window;
  while (step < cfg.train.max_steps) {
    if (cursor == static_cast<int64_t>(batches.size())) {
      ++epoch;
      if (cfg.train.max_epochs > 0 && epoch >= cfg.train.max_epochs) break;
      batches = batcher.epoch(epoch);
      cursor = 0;
    }
    const std::vector<data::GlobalBatch> micro = batcher.split(batches[cursor++], parts);
    ++step;

    // Forward and backward over this rank's micro-batches; gradients add up.
    grad_sync.zero_grad();
    auto sums = torch::zeros({3}, torch::dtype(torch::kDouble).device(device));  // loss, nll, tokens
    for (int64_t a = 0; a < cfg.train.accum_steps; ++a) {
      auto phase = Clock::now();
      const int64_t part = data::micro_batch_index(rank, a, world);
      const data::Batch batch = load_batch(train_set, micro[part]).to(device);
      window.times.data += seconds_since(phase);
      grad_sync.prepare(/*last=*/a + 1 == cfg.train.accum_steps);
      if (batch.num_tgt_tokens == 0) continue;  // an empty part adds nothing
      phase = Clock::now();
      seed_dropout(static_cast<uint64_t>(cfg.run.seed), step, part);
      const LossSums s = batch_loss(model, loss, batch);
      s.smoothed.backward();
      sums += torch::stack({s.smoothed.detach().to(torch::kDouble), s.nll.to(torch::kDouble),
                            torch::scalar_tensor(static_cast<double>(s.tokens),
                                                 torch::dtype(torch::kDouble).device(device))});
      window.times.compute += seconds_since(phase);
    }

    // The global batch: sum over ranks, divide once by its target tokens.
    auto phase = Clock::now();
    grad_sync.synchronize();  // first: the gradient buckets' collectives come in a fixed order
    comm->allreduce_sum(sums);
    sums = sums.cpu();
    const double tokens = sums[2].item<double>();
    window.times.comm += seconds_since(phase);
    phase = Clock::now();
    const double max_norm =
        cfg.optim.clip_norm > 0 ? cfg.optim.clip_norm : std::numeric_limits<double>::infinity();
    const double grad_norm = grad_sync.scale_and_clip(tokens, max_norm);
    const double lr = schedule.at(step);
    set_learning_rate(optimizer, lr);
    optimizer.step();
    window.times.update += seconds_since(phase);

    window.smoothed += sums[0].item<double>();
    window.nll += sums[1].item<double>();
    window.tokens += tokens;
    window.grad_norm += grad_norm;
    ++window.steps;
    if (step % cfg.train.log_every == 0 || step == cfg.train.max_steps) {
      const double wall = seconds_since(window.start);
      const nlohmann::json shares = phase_shares(window.times, wall, *comm, device);  // collective
      const double nll = window.nll / window.tokens;
      if (rank == 0)
        metrics->write({{"step", step}, {"epoch", epoch}, {"loss", window.smoothed / window.tokens},
                        {"nll", nll}, {"ppl", std::exp(nll)}, {"lr", lr},
                        {"grad_norm", window.grad_norm / window.steps},
                        {"tokens_per_s", window.tokens / wall}, {"time_share", shares},
                        {"elapsed_s", seconds_since(start)}});
      window = Window();
    }
    if (cfg.dist.check_every > 0 && step % cfg.dist.check_every == 0)
      dist::check_replicas_equal(params, *comm, step);
    if (cfg.train.save_every > 0 && step % cfg.train.save_every == 0) save();
  }
  dist::check_replicas_equal(params, *comm, step);
  spdlog::info("parameters identical on all {} ranks (checksum)", world);
  if (cfg.train.save_every == 0 || step % cfg.train.save_every != 0) save();
  spdlog::info("training done: {} steps, {} epochs, {:.0f} s", step, epoch, seconds_since(start));
}

}  // namespace train
