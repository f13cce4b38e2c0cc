// evaluate: the evaluation job of a training run.
//
//   evaluate --run runs/base --split test [--checkpoint latest|best|<dir>] [--average-last 5]
//            [--beam 4 --length-penalty 0.6]          score a split (results.json, hypotheses.txt)
//   mpirun -np 4 evaluate --run runs/base ...         the same, the batches shared by 4 ranks
//   evaluate --run runs/base --watch                  score every checkpoint as training writes it
//   evaluate --run runs/base --translate input.txt    translate a file (or - for stdin) to stdout
//                                                     (a classification run: class names)
//   evaluate --config-reference                       every setting (docs/evaluate.md)
//
// Settings: evaluate_settings.h. Exit status: 0 done, 1 error (the message
// names the file or option), 2 bad usage.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "base/logging.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/node_check.h"
#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/checkpoint/state_dict.h"
#include "trainer/eval/checkpoint_average.h"
#include "trainer/eval/evaluate_settings.h"
#include "trainer/eval/evaluation.h"
#include "trainer/eval/translate.h"
#include "trainer/eval/watch.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/host_memory.h"
#include "trainer/runtime/runtime.h"

namespace {

namespace fs = std::filesystem;

// cuda:<local rank> (or the rank's one bound GPU) when there is one, as for training.
torch::Device eval_device(const eval::EvaluateOptions& o, const launch::ProcessInfo& info,
                          const launch::Ranks& ranks) {
  return runtime::agree_on_device(info, o.device, choices::Backend::kMpi, ranks).device;
}

// <run>/eval/<split>-step_N[-avgK][-beamB]
fs::path default_out_dir(const eval::EvaluateOptions& o,
                         const std::vector<std::string>& checkpoints) {
  std::string name = o.eval.split + "-" + fs::path(checkpoints.back()).filename().string();
  if (checkpoints.size() > 1) name += "-avg" + std::to_string(checkpoints.size());
  if (o.eval.decode.beam > 1) name += "-beam" + std::to_string(o.eval.decode.beam);
  return o.run_dir / "eval" / name;
}

// Regular files are read in chunks; terminals and pipes a line at a time.
bool interactive(int fd) {
  struct stat s {};
  return fstat(fd, &s) != 0 || !S_ISREG(s.st_mode);
}

// The trainer writes config.toml first: without it, `dir` is no run. A
// watcher may start first (a Slurm job submitted beside the training job
// that starts sooner): it waits for the run to begin, saying so every 10
// minutes (a mistyped --run would wait until the job's time limit).
void require_run_dir(const fs::path& dir, bool watch, double poll_s) {
  const fs::path config = dir / "config.toml";
  const bool dataset = fs::exists(dir / data::kManifestFile);
  if (!watch || dataset) {
    if (!fs::is_directory(dir))
      throw std::runtime_error("--run " + dir.string() + ": no such directory");
    if (!fs::exists(config))
      throw std::runtime_error(dir.string() + ": no config.toml: not a run directory" +
                               (dataset ? std::string(" (a dataset)") : ""));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t next_minute = 0; !fs::exists(config);) {
    const int64_t minutes =
        std::chrono::duration_cast<std::chrono::minutes>(std::chrono::steady_clock::now() - start)
            .count();
    if (minutes >= next_minute) {
      logging::info(
          "waiting for {} to appear: its training run has not started ({} min so far, polling "
          "every {} s)",
          config.string(), minutes, poll_s);
      next_minute = minutes + 10;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
  }
}

int run(const eval::EvaluateOptions& o, const launch::ProcessInfo& info) {
  require_run_dir(o.run_dir, o.watch, o.poll_s);
  const launch::Ranks ranks;
  // A missing split or shard named before any checkpoint is looked for.
  if (o.translate.empty()) {
    std::filesystem::path data_dir;
    launch::together(ranks, [&] { data_dir = eval::dataset_dir(o.run_dir, o.data_dir); });
    data::open_checked_on_each_node(data_dir, o.eval.split, {}, ranks, info);
  }
  if (o.watch) {
    eval::WatchOptions watch;
    watch.run_dir = o.run_dir;
    watch.data_dir = o.data_dir;
    watch.poll_s = o.poll_s;
    watch.device = eval_device(o, info, ranks);
    eval::watch_run(watch, o.eval, ranks, info);
    return 0;
  }
  const auto checkpoints = eval::select_checkpoints(o.run_dir, o.checkpoint, o.average_last, ranks);
  eval::EvalModel m =
      eval::load_eval_model(o.run_dir, o.data_dir, checkpoints, ranks, eval_device(o, info, ranks));
  if (!o.save_weights.empty() && info.rank == 0) {
    checkpoint::save_state_dict(m.model.module(), o.save_weights);
    logging::info("weights of {} checkpoint(s) saved to {}", checkpoints.size(),
                  o.save_weights.string());
  }
  if (!o.translate.empty()) {
    if (info.world_size > 1)
      throw std::invalid_argument("--translate runs on one rank (no mpirun -np N)");
    eval::TranslateOptions options;
    options.decode = o.eval.decode;
    options.batch_tokens = o.eval.batch_tokens;
    const bool from_stdin = o.translate == "-";
    std::ifstream file;
    if (!from_stdin) {
      file.open(o.translate);
      if (!file) throw std::runtime_error("cannot read --translate file " + o.translate.string());
    }
    options.line_by_line = from_stdin && interactive(STDIN_FILENO);
    const std::string source = from_stdin ? "stdin" : o.translate.string();
    int64_t lines = 0;
    try {
      lines = eval::translate_stream(m, from_stdin ? std::cin : file, std::cout, options);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--translate " + source + ": " + e.what());
    }
    if (lines == 0) throw std::runtime_error("--translate: " + source + " is empty (no lines)");
    logging::info("translated {} lines", lines);
    return 0;
  }
  eval::EvalOptions options = o.eval;
  if (options.out_dir.empty()) options.out_dir = default_out_dir(o, checkpoints);
  const nlohmann::json results = eval::evaluate_split(m, options, ranks, info);
  if (info.rank == 0) std::cout << results.dump(2) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  launch::Process& process = launch::Process::init(argc, argv);
  logging::setup(process.info().rank);

  CLI::App app{
      "Evaluate a training run: loss/perplexity, greedy or beam decoding, BLEU, chrF, "
      "exact match; watch a run; translate text"};
  eval::EvaluateSettings settings(app);
  bool print_reference = false;
  app.add_flag("--config-reference", print_reference,
               "print every setting as Markdown (docs/evaluate.md) and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (process.is_main()) app.exit(e);  // prints help or the usage error
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  if (print_reference) {
    if (process.is_main()) std::cout << settings.reference();
    return 0;
  }
  eval::EvaluateOptions options;
  try {  // the settings' own consistency: a usage error, 2
    options = settings.resolve();
  } catch (const std::exception& e) {
    if (process.is_main()) logging::error("evaluate: {}", e.what());
    return 2;
  }

  // Each decoding step allocates and frees its logits ([rows, vocabulary]:
  // tens of MB) and the caches' copies; with glibc's mmap threshold every one
  // page-faults back in (docs/performance.md, "Why the code is as it is").
  if (options.keep_freed_memory) runtime::keep_freed_host_memory();
  runtime::setup_runtime(process.info(), static_cast<int>(options.threads));
  try {
    return run(options, process.info());
  } catch (const std::exception& e) {
    if (process.info().world_size > 1)
      process.abort(e.what(), 1);  // no rank left waiting in a collective
    logging::error("{}", e.what());
    return 1;
  }
}
