#include "trainer/config/run_config.h"

#include <torch/version.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace config {

namespace {

// The working directory as the shell names it ($PWD, as `pwd` prints it)
// when that is the same directory: getcwd() resolves symbolic links, and a
// cluster's paths (/home -> /gpfs/...) are the same on every host only by
// the name users give them.
std::filesystem::path working_directory() {
  namespace fs = std::filesystem;
  const char* pwd = std::getenv("PWD");
  std::error_code error;
  if (pwd != nullptr && fs::path(pwd).is_absolute() &&
      fs::equivalent(pwd, fs::current_path(), error))
    return pwd;
  return fs::current_path();
}

// `text` (the value of `key`) as an absolute path without "." or ".." parts
// or a trailing '/', by the working directory's name. A ".." after a
// symbolic link means another directory to the operating system, which
// resolves it in the link's target (and prepare_data, writing "../x", wrote
// there): where the two readings name different places, the path is refused.
std::string absolute_path(const std::string& key, const std::string& text) {
  namespace fs = std::filesystem;
  const auto plain = [](fs::path p) {  // no "." or ".." parts, no trailing '/'
    p = p.lexically_normal();
    if (!p.has_filename() && p != p.root_path()) p = p.parent_path();
    return p;
  };
  const fs::path path = plain(working_directory() / text);
  const fs::path given(text);
  if (std::find(given.begin(), given.end(), "..") == given.end()) return path.string();
  std::error_code by_name_error, by_system_error;
  const fs::path by_name = plain(fs::weakly_canonical(path, by_name_error));
  const fs::path by_system =
      plain(fs::weakly_canonical(fs::current_path() / text, by_system_error));
  if (!by_name_error && !by_system_error && by_name != by_system)
    throw std::invalid_argument(
        "config: " + key + " = '" + text + "' is " + path.string() +
        " from the working directory's name ($PWD), but " + by_system.string() +
        " to the operating system, which resolves '..' after the symbolic link it passes: give " +
        key + (given.is_absolute() ? " without '..'" : " as an absolute path"));
  return path.string();
}

}  // namespace

void RunConfig::bind(settings::Schema& s) {
  s.add("run.name", &run.name, "run name: outputs go to <out_dir>/<name>");
  s.add("run.out_dir", &run.out_dir,
        "directory holding runs (relative: to the working directory; saved absolute)");
  s.add("run.seed", &run.seed, "seed for data order, initialisation and dropout");

  s.add("data.dir", &data.dir,
        "prepared dataset directory, prepare_data's --out (relative: to the working directory; "
        "saved absolute)");
  s.add("data.batch_tokens", &data.batch_tokens, "tokens per global batch, padding included");
  s.add("data.max_len", &data.max_len, "skip examples longer than this (tokens)");
  s.add("data.prefetch", &data.prefetch,
        "steps (each accum_steps micro-batches) a background thread loads ahead");
  s.add("data.verify_checksums", &data.verify_checksums,
        "check every shard's sha256 against the manifest at start");

  s.add("model.d_model", &model.d_model, "model width d_model");
  s.add("model.heads", &model.heads, "attention heads h");
  s.add("model.d_ff", &model.d_ff, "feed-forward inner size d_ff");
  s.add("model.encoder_layers", &model.encoder_layers, "encoder layers N");
  s.add("model.decoder_layers", &model.decoder_layers, "decoder layers N");
  s.add("model.dropout", &model.dropout, "dropout P_drop");
  s.add("model.layer_norm_eps", &model.layer_norm_eps, "LayerNorm epsilon");
  s.add("model.norm", &model.norm,
        "LayerNorm placement: pre (Annotated Transformer) or post (paper)", model::kNormNames);
  s.add("model.share_embeddings", &model.share_embeddings, "one embedding table for src and tgt");
  s.add("model.tie_output", &model.tie_output, "generator weight = target embedding");
  s.add("model.max_positions", &model.max_positions, "longest sequence (positional table rows)");

  s.add("optim.schedule", &optim.schedule, "learning-rate schedule", kScheduleNames);
  s.add("optim.lr", &optim.lr, "noam: factor; inverse_sqrt/constant: peak learning rate");
  s.add("optim.warmup_steps", &optim.warmup_steps, "warmup steps");
  s.add("optim.beta1", &optim.beta1, "Adam beta1");
  s.add("optim.beta2", &optim.beta2, "Adam beta2");
  s.add("optim.eps", &optim.eps, "Adam epsilon");
  s.add("optim.clip_norm", &optim.clip_norm, "clip gradients to this global norm (0 = off)");
  s.add("optim.label_smoothing", &optim.label_smoothing, "label smoothing epsilon_ls");

  s.add("train.max_steps", &train.max_steps, "optimizer steps to train");
  s.add("train.max_epochs", &train.max_epochs, "epochs to train (0 = no limit)");
  s.add("train.accum_steps", &train.accum_steps, "micro-batches per rank per optimizer step");
  s.add("train.log_every", &train.log_every, "log a line every N steps");
  s.add("train.slow_rank_factor", &train.slow_rank_factor,
        "at each log line, name in the log and metrics.jsonl every rank whose compute time "
        "over the interval (its step time less its wait in collectives) is this many times the "
        "median rank's (the lower median: with half the ranks slow, a fast one's) or more, with "
        "its host and device (0 = off)");
  s.add("train.save_every", &train.save_every, "checkpoint every N steps (0 = only at the end)");
  s.add("train.save_every_minutes", &train.save_every_minutes,
        "also checkpoint when this many minutes have passed since the last save (0 = off)");
  s.add("train.keep_last", &train.keep_last, "checkpoints to keep (the best is kept too)");
  s.add("train.valid_every", &train.valid_every, "validation loss every N steps (0 = off)");
  s.add("train.patience", &train.patience,
        "stop after N validations without improvement (0 = never)");
  s.add("train.max_nonfinite_steps", &train.max_nonfinite_steps,
        "give up after N non-finite steps in a row (each is skipped)");
  s.add("train.watchdog_s", &train.watchdog_s,
        "end the job when one phase of a step takes longer than this (0 = off)");
  s.add("train.threads", &train.threads, "torch threads per rank (0 = cores / local ranks)");
  s.add("train.keep_freed_memory", &train.keep_freed_memory,
        "malloc keeps the host memory a step frees for the next step's tensors instead of "
        "unmapping large blocks (which page-fault back in); false: glibc's default");
  s.add("train.precision", &train.precision,
        "auto: bf16 where the device has bfloat16 units (CUDA compute capability >= 8.0; CPUs "
        "with AVX512-BF16 or AMX), else fp32 (the run's log and config.toml say which); fp32; "
        "bf16: forward pass under autocast to bfloat16 (oneDNN on CPUs, CUDA autocast on GPUs); "
        "weights, gradients, Adam moments, loss and checkpoints stay fp32; fp16: the same with "
        "float16 and a dynamic loss scale, on CUDA only (GPUs without bfloat16)",
        choices::kPrecisionNames);
  s.add("train.attention", &train.attention,
        "auto: LibTorch's fused scaled_dot_product_attention (flash / memory-efficient kernels) "
        "on GPUs, the explicit matmul-softmax-matmul on CPUs and with train.deterministic; "
        "explicit; fused: the fused kernel on CPUs too (LibTorch >= 2.0)",
        model::kAttentionNames);
  s.add("train.tf32", &train.tf32,
        "fp32 matrix products and convolutions on CUDA tensor cores in TF32 (10-bit mantissa, "
        "fp32's range; compute capability >= 8.0, no effect on older GPUs and on CPUs); false: "
        "IEEE fp32 (e.g. to compare with a CPU run)");
  s.add("train.device", &train.device,
        "auto: cuda:<local rank> (or the one GPU the scheduler bound to the rank) when LibTorch "
        "has CUDA and the node a GPU, else the CPU; cpu; cuda (an error without a GPU)",
        choices::kDeviceNames);
  s.add("train.deterministic", &train.deterministic,
        "deterministic kernels only (cuBLAS workspace, no cuDNN autotuning): GPU runs repeat "
        "bitwise, e.g. for exact resume; slower");

  s.add("dist.backend", &dist.backend, "collectives: nccl on GPUs, mpi on CPUs",
        choices::kBackendNames);
  s.add("dist.bucket_mb", &dist.bucket_mb, "gradient allreduce bucket size in MiB");
  s.add("dist.overlap", &dist.overlap, "start bucket allreduces during backward");
  s.add("dist.shard_update", &dist.shard_update,
        "on: each rank updates its shard of the parameters and keeps only that shard's Adam "
        "moments (gradients reduce-scattered, parameters allgathered: ZeRO stage 1); auto: on "
        "with the mpi backend and more than one rank, off with nccl",
        kShardUpdateNames);
  s.add("dist.node_shared_memory", &dist.node_shared_memory,
        "sharded update, CPU ranks all on one machine: parameters and gradients in memory every "
        "rank maps, each rank sums its shard from the others' gradients, no allgather (false: "
        "MPI's reduce-scatter and allgather)");
  s.add("dist.check_every", &dist.check_every,
        "compare parameter checksums across ranks every N steps (0 = at the end only)");
  s.add("dist.peer_lost_after_s", &dist.peer_lost_after_s,
        "a rank that got a termination signal (mpirun's or srun's, after a rank died) and still "
        "waits for its peers this many seconds later takes a peer as lost: one survivor saves the "
        "last step every rank completed, and the job ends (0: a signal never means that)");
}

void RunConfig::validate() const {
  const auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("config: " + what);
  };
  require(!run.name.empty(), "run.name must not be empty");
  require(!data.dir.empty(), "data.dir must not be empty");
  require(data.batch_tokens > 0, "data.batch_tokens must be > 0");
  require(data.max_len > 0, "data.max_len must be > 0");
  require(data.prefetch >= 1, "data.prefetch must be >= 1");
  model::validate_architecture(model);  // [model]: the model's own checks
  require(model.max_positions > data.max_len, "model.max_positions must exceed data.max_len");
  require(std::isfinite(optim.lr) && optim.lr > 0, "optim.lr must be a finite number > 0");
  require(optim.warmup_steps >= 0, "optim.warmup_steps must be >= 0");
  require(optim.schedule != Schedule::kNoam || optim.warmup_steps > 0,
          "optim.warmup_steps must be > 0 for noam");
  require(optim.clip_norm >= 0, "optim.clip_norm must be >= 0");
  require(optim.label_smoothing >= 0 && optim.label_smoothing < 1,
          "optim.label_smoothing must be in [0, 1)");
  require(train.max_steps > 0, "train.max_steps must be > 0");
  require(train.accum_steps > 0, "train.accum_steps must be > 0");
  require(train.log_every > 0, "train.log_every must be > 0");
  require(train.slow_rank_factor == 0 || train.slow_rank_factor > 1,
          "train.slow_rank_factor must be 0 (off) or above 1");
  require(train.save_every >= 0, "train.save_every must be >= 0");
  require(train.threads >= 0, "train.threads must be >= 0");
  require(train.save_every_minutes >= 0, "train.save_every_minutes must be >= 0");
  require(train.keep_last >= 1, "train.keep_last must be >= 1");
  require(train.valid_every >= 0, "train.valid_every must be >= 0");
  require(train.patience >= 0, "train.patience must be >= 0");
  require(train.max_nonfinite_steps >= 1, "train.max_nonfinite_steps must be >= 1");
  require(train.watchdog_s >= 0, "train.watchdog_s must be >= 0");
  require(train.attention != model::AttentionKernel::kFused || TORCH_VERSION_MAJOR >= 2,
          "train.attention = fused needs LibTorch >= 2.0 (this build has " TORCH_VERSION ")");
  require(train.attention != model::AttentionKernel::kFused || !train.deterministic,
          "train.attention = fused is not deterministic: use auto or explicit with "
          "train.deterministic");
  require(dist.bucket_mb > 0, "dist.bucket_mb must be > 0");
  require(dist.check_every >= 0, "dist.check_every must be >= 0");
  require(dist.peer_lost_after_s >= 0, "dist.peer_lost_after_s must be >= 0");
}

model::ModelConfig RunConfig::model_config(int64_t src_vocab, int64_t tgt_vocab,
                                           int64_t pad_id) const {
  model::ModelConfig m = model;
  m.src_vocab = src_vocab;
  m.tgt_vocab = tgt_vocab;
  m.pad_id = pad_id;
  // The fused kernels' backward is not deterministic on GPUs (memory-efficient
  // attention accumulates with atomics): train.deterministic keeps the formula.
  const bool fused_kernels = TORCH_VERSION_MAJOR >= 2 && !train.deterministic;
  m.attention = train.attention == model::AttentionKernel::kFusedOnGpu && !fused_kernels
                    ? model::AttentionKernel::kExplicit
                    : train.attention;
  return m;
}

RunConfig read_run_config(const std::string& toml_path) {
  RunConfig cfg;
  settings::Schema schema;
  cfg.bind(schema);
  schema.load_toml(toml_path);
  cfg.validate();
  return cfg;
}

std::string to_toml(const RunConfig& cfg) {
  RunConfig copy = cfg;  // the schema binds the fields it reads
  settings::Schema schema;
  copy.bind(schema);
  return schema.to_toml();
}

RunConfigOptions::RunConfigOptions(CLI::App& app) {
  config_.bind(schema_);
  // evaluate's names for the same settings, so both programs take them.
  schema_.add_alias("train.threads", "--threads");
  schema_.add_alias("train.device", "--device");
  schema_.add_config_file_and_cli(app, "TOML run config (configs/*.toml)");
}

std::string RunConfigOptions::reference() const {
  return "# Configuration reference\n\n"
         "Generated by `trainer --config-reference` from the schema the trainer reads its "
         "config with (a test fails when this file and the trainer differ).\n\n"
         "Each key is given in a TOML file (`--config run.toml`, a `[section]` per table, "
         "`key = value`) or on the command line (`--section.key value`); the command line "
         "overrides the file, which overrides the defaults below. Unknown keys and values of the "
         "wrong type are errors naming the file and key. The resolved config is saved as "
         "`<run.out_dir>/<run.name>/config.toml`, which `evaluate` reads; a relative `data.dir` "
         "or `run.out_dir` is resolved against the directory the trainer was started from and "
         "saved absolute. The vocabulary sizes and padding id come from the dataset's "
         "manifest.\n" +
         schema_.to_markdown();
}

void RunConfigOptions::resolve() {
  schema_.read_settings();
  config_.validate();
  // Relative paths mean what they meant where the job was started (as in
  // fairseq and Marian: the working directory, which mpirun and srun give
  // every rank); saved absolute, the run's config.toml means the same to a
  // job started anywhere later (evaluate, a resume from a Slurm script).
  config_.run.out_dir = absolute_path("run.out_dir", config_.run.out_dir);
  config_.data.dir = absolute_path("data.dir", config_.data.dir);
}

}  // namespace config
