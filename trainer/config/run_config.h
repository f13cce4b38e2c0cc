// Everything a training run is: the config file's sections as structs.
// The mathematics of a run is fixed by this config alone (docs/DESIGN.md: the
// global batch); world size and accumulation only decide how it is split.
#pragma once
#include <cstdint>
#include <string>

#include "settings/schema.h"
#include "trainer/choices/compute.h"
#include "trainer/model/model_config.h"

namespace config {

// The learning-rate schedule (train/lr_schedule.h has the formulas).
enum class Schedule { kNoam, kInverseSqrt, kConstant };
inline const settings::Names<Schedule> kScheduleNames = {{"noam", Schedule::kNoam},
                                                         {"inverse_sqrt", Schedule::kInverseSqrt},
                                                         {"constant", Schedule::kConstant}};

// Whether each rank updates only its shard of the parameters (dist.shard_update).
enum class ShardUpdate { kAuto, kOn, kOff };
inline const settings::Names<ShardUpdate> kShardUpdateNames = {
    {"auto", ShardUpdate::kAuto}, {"on", ShardUpdate::kOn}, {"off", ShardUpdate::kOff}};

struct RunSection {
  std::string name = "default";  // run directory: <out_dir>/<name>
  std::string out_dir = "runs";
  int64_t seed = 1;  // data order, initialisation and dropout derive from it
};

struct DataSection {
  std::string dir = "data/default";  // prepared dataset (manifest.json + shards)
  int64_t batch_tokens = 4096;       // tokens per GLOBAL batch, padding included
  int64_t max_len = 256;             // longer examples are skipped
  int64_t prefetch = 4;              // steps loaded ahead by a background thread
  bool verify_checksums = false;     // sha256 of every shard against the manifest at start
};

struct OptimSection {
  Schedule schedule = Schedule::kNoam;  // noam | inverse_sqrt | constant
  double lr = 2.0;                      // noam: the factor; otherwise the peak learning rate
  int64_t warmup_steps = 4000;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-9;
  double clip_norm = 0.0;  // global gradient-norm clip; 0 = off
  double label_smoothing = 0.1;
};

struct TrainSection {
  int64_t max_steps = 100000;  // optimizer steps (global batches)
  int64_t max_epochs = 0;      // 0 = no limit
  int64_t accum_steps = 1;     // micro-batches per rank per step
  int64_t log_every = 100;
  double slow_rank_factor = 1.3;  // name ranks computing this many times the median; 0 = off
  int64_t save_every = 1000;
  double save_every_minutes = 0;    // also save when this much time has passed; 0 = off
  int64_t keep_last = 5;            // checkpoints kept (plus the best)
  int64_t valid_every = 0;          // validation loss every N steps; 0 = off
  int64_t patience = 0;             // stop after N validations without improvement; 0 = off
  int64_t max_nonfinite_steps = 5;  // skipped non-finite steps in a row before giving up
  double watchdog_s = 900;          // end the job when a step phase lasts longer; 0 = off
  int64_t threads = 0;              // torch threads per rank; 0 = cores / ranks on the node
  bool keep_freed_memory = true;    // host memory a step frees stays for the next (host_memory.h)
  // auto (bf16 where the device has it) | fp32 | bf16 | fp16
  choices::Precision precision = choices::Precision::kAuto;
  bool tf32 = true;  // fp32 matrix products on CUDA tensor cores in TF32
  // auto (fused kernels on GPUs) | explicit | fused
  model::AttentionKernel attention = model::AttentionKernel::kFusedOnGpu;
  // auto (a GPU when there is one for the rank) | cpu | cuda
  choices::Device device = choices::Device::kAuto;
  bool deterministic = false;  // deterministic kernels (bitwise-reproducible GPU runs)
};

// How ranks cooperate; none of it changes the mathematics of a step.
struct DistSection {
  // auto (nccl on GPUs, mpi on CPUs) | mpi | nccl
  choices::Backend backend = choices::Backend::kAuto;
  double bucket_mb = 25;  // gradient allreduce bucket size (MiB)
  bool overlap = true;    // allreduce buckets during backward
  // auto (on with mpi and > 1 rank, off with nccl) | on | off
  ShardUpdate shard_update = ShardUpdate::kAuto;
  bool node_shared_memory = true;  // sharded CPU ranks on one machine: through shared memory
  int64_t check_every = 1000;      // compare parameter checksums across ranks (0 = end only)
  double peer_lost_after_s = 3;    // signalled and still waiting for peers: a peer is lost
};

struct RunConfig {
  RunSection run;
  DataSection data;
  model::ModelConfig model;  // vocab sizes and pad id come from the dataset
  OptimSection optim;
  TrainSection train;
  DistSection dist;

  void bind(settings::Schema& schema);  // registers every field under "section.key"
  void validate() const;                // std::invalid_argument naming the field
  std::string run_dir() const { return run.out_dir + "/" + run.name; }
  // The model section completed with the dataset's vocabulary sizes and pad id.
  model::ModelConfig model_config(int64_t src_vocab, int64_t tgt_vocab, int64_t pad_id) const;
};

// The config a run saved (<run>/config.toml), for jobs that follow training.
RunConfig read_run_config(const std::string& toml_path);
// `cfg` as TOML, every key of every section, as read_run_config reads it.
std::string to_toml(const RunConfig& cfg);

// A RunConfig read from `--config file.toml` and `--section.key value`
// overrides. Usage:  RunConfigOptions opts(app); app.parse(argc, argv); opts.resolve();
class RunConfigOptions {
 public:
  explicit RunConfigOptions(CLI::App& app);
  // File, then command line, then validate(); data.dir and run.out_dir made
  // absolute (against the working directory).
  void resolve();
  const RunConfig& config() const { return config_; }
  std::string to_toml() const { return schema_.to_toml(); }
  std::string reference() const;  // docs/configuration.md: how keys are given, then every key

  RunConfigOptions(const RunConfigOptions&) = delete;  // the schema points into config_
  RunConfigOptions& operator=(const RunConfigOptions&) = delete;

 private:
  RunConfig config_;
  settings::Schema schema_;
};

}  // namespace config
