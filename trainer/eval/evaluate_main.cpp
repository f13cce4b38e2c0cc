// evaluate: the evaluation job of a training run.
//
//   evaluate --run runs/base --split test [--checkpoint latest|best|<dir>] [--average-last 5]
//            [--beam 4 --length-penalty 0.6]          score a split (results.json, hypotheses.txt)
//   mpirun -np 4 evaluate --run runs/base ...         the same, the batches shared by 4 ranks
//   evaluate --run runs/base --watch                  score every checkpoint as training writes it
//   evaluate --run runs/base --translate input.txt    translate a file (or - for stdin) to stdout
//                                                     (a classification run: class names)
//
// Exit status: 0 done, 1 error (the message names the file or option), 2 bad usage.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "data_pipeline/dataset.h"
#include "data_pipeline/manifest.h"
#include "launch/logging.h"
#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/checkpoint/state_dict.h"
#include "trainer/eval/checkpoint_average.h"
#include "trainer/eval/evaluation.h"
#include "trainer/eval/metrics/bleu_tokenizers.h"
#include "trainer/eval/translate.h"
#include "trainer/eval/watch.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/host_memory.h"
#include "trainer/runtime/runtime.h"

namespace {

namespace fs = std::filesystem;

struct Cli {
  std::string run_dir, checkpoint = "latest", data_dir, translate, save_weights;
  int64_t average_last = 1;
  bool watch = false;
  double poll_s = 30;
  int threads = 0;
  bool keep_freed_memory = true;  // runtime/host_memory.h
  choices::Device device = choices::Device::kAuto;
  eval::EvalOptions eval;
};

// Number checks whose refusals read as what is wanted: CLI11's own
// PositiveNumber prints its range, up to the largest double in 309 digits.
CLI::Validator number_at_least(double least, const std::string& what) {
  return CLI::Validator(
      [least, what](std::string& value) {
        double number = 0;
        try {
          number = std::stod(value);
        } catch (const std::exception&) {
          return "'" + value + "' is not a number";
        }
        return number >= least ? std::string() : "must be " + what + ", not " + value;
      },
      what == "positive" ? "POSITIVE" : "NON-NEGATIVE");
}
const CLI::Validator kPositive = number_at_least(1e-300, "positive");
const CLI::Validator kNonNegative = number_at_least(0, "non-negative");

// cuda:<local rank> (or the rank's one bound GPU) when there is one, as for training.
torch::Device eval_device(const Cli& cli, const launch::ProcessInfo& info,
                          const launch::Ranks& ranks) {
  return runtime::agree_on_device(info, cli.device, choices::Backend::kMpi, ranks).device;
}

// <run>/eval/<split>-step_N[-avgK][-beamB]
std::string default_out_dir(const Cli& cli, const std::vector<std::string>& checkpoints) {
  std::string name = cli.eval.split + "-" + fs::path(checkpoints.back()).filename().string();
  if (checkpoints.size() > 1) name += "-avg" + std::to_string(checkpoints.size());
  if (cli.eval.decode.beam > 1) name += "-beam" + std::to_string(cli.eval.decode.beam);
  return (fs::path(cli.run_dir) / "eval" / name).string();
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
void require_run_dir(const std::string& dir, bool watch, double poll_s) {
  const fs::path config = fs::path(dir) / "config.toml";
  const bool dataset = fs::exists(fs::path(dir) / data::kManifestFile);
  if (!watch || dataset) {
    if (!fs::is_directory(dir)) throw std::runtime_error("--run " + dir + ": no such directory");
    if (!fs::exists(config))
      throw std::runtime_error(dir + ": no config.toml: not a run directory" +
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

// rank 0 chooses the checkpoints for every rank: a run still in training may
// prune between two ranks' looks, and all must score the same weights.
std::vector<std::string> agreed_checkpoints(const Cli& cli, const launch::Ranks& ranks) {
  std::string chosen;  // each path ended by a NUL, the one byte no path holds (a newline can be)
  launch::on_main(ranks, [&] {
    for (const auto& dir : eval::select_checkpoints(cli.run_dir, cli.checkpoint, cli.average_last))
      chosen += dir + '\0';
  });
  std::vector<std::string> checkpoints;
  std::istringstream paths(ranks.broadcast(chosen));
  for (std::string path; std::getline(paths, path, '\0');) checkpoints.push_back(path);
  return checkpoints;
}

int run(const Cli& cli, const launch::ProcessInfo& info) {
  require_run_dir(cli.run_dir, cli.watch, cli.poll_s);
  const launch::Ranks ranks;
  if (cli.translate.empty())  // a missing split is named before any checkpoint is looked for
    data::Dataset(eval::dataset_dir(cli.run_dir, cli.data_dir), cli.eval.split);
  if (cli.watch) {
    eval::WatchOptions watch;
    watch.run_dir = cli.run_dir;
    watch.data_dir = cli.data_dir;
    watch.poll_s = cli.poll_s;
    watch.device = eval_device(cli, info, ranks);
    eval::watch_run(watch, cli.eval, ranks);
    return 0;
  }
  const auto checkpoints = agreed_checkpoints(cli, ranks);
  eval::EvalModel m =
      eval::load_eval_model(cli.run_dir, cli.data_dir, checkpoints, eval_device(cli, info, ranks));
  if (!cli.save_weights.empty() && info.rank == 0) {
    checkpoint::save_state_dict(m.model.module(), cli.save_weights);
    logging::info("weights of {} checkpoint(s) saved to {}", checkpoints.size(), cli.save_weights);
  }
  if (!cli.translate.empty()) {
    if (info.world_size > 1)
      throw std::invalid_argument("--translate runs on one rank (no mpirun -np N)");
    eval::TranslateOptions options;
    options.decode = cli.eval.decode;
    options.batch_tokens = cli.eval.batch_tokens;
    std::ifstream file;
    if (cli.translate != "-") {
      file.open(cli.translate);
      if (!file) throw std::runtime_error("cannot read --translate file " + cli.translate);
    }
    options.line_by_line = cli.translate == "-" && interactive(STDIN_FILENO);
    const std::string source = cli.translate == "-" ? "stdin" : cli.translate;
    int64_t lines = 0;
    try {
      lines = eval::translate_stream(m, cli.translate == "-" ? std::cin : file, std::cout, options);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--translate " + source + ": " + e.what());
    }
    if (lines == 0) throw std::runtime_error("--translate: " + source + " is empty (no lines)");
    logging::info("translated {} lines", lines);
    return 0;
  }
  eval::EvalOptions options = cli.eval;
  if (options.out_dir.empty()) options.out_dir = default_out_dir(cli, checkpoints);
  const nlohmann::json results = eval::evaluate_split(m, options, ranks);
  if (info.rank == 0) std::cout << results.dump(2) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  launch::Process& process = launch::Process::init(argc, argv);
  logging::setup(process.info());

  CLI::App app{
      "Evaluate a training run: loss/perplexity, greedy or beam decoding, BLEU, chrF, "
      "exact match; watch a run; translate text"};
  Cli cli;
  app.add_option("--run", cli.run_dir, "run directory (runs/<name>)")->required();
  app.add_option("--split", cli.eval.split, "dataset split to score")->capture_default_str();
  app.add_option("--checkpoint", cli.checkpoint,
                 "latest, best or a checkpoint directory (the words of the trainer's --resume)")
      ->type_name("latest|best|DIR")
      ->capture_default_str();
  app.add_option("--average-last", cli.average_last,
                 "average the weights of the last N checkpoints up to --checkpoint")
      ->capture_default_str()
      ->check(kPositive);
  app.add_option("--save-weights", cli.save_weights,
                 "also write the (averaged) weights to this model.pt file");
  app.add_option("--data", cli.data_dir, "dataset directory (default: the run's data.dir)");
  app.add_option("--out", cli.eval.out_dir,
                 "output directory (default: <run>/eval/<split>-<checkpoint>...)");
  app.add_option("--beam", cli.eval.decode.beam, "beam size (1 = greedy)")
      ->capture_default_str()
      ->check(kPositive);
  app.add_option("--length-penalty", cli.eval.decode.length_penalty,
                 "GNMT length penalty alpha for beam search")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_option("--max-extra-len", cli.eval.decode.max_extra_len,
                 "decode at most source length + this")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_option(
         "--bleu-tokenize", cli.eval.bleu_tokenize,
         "sacreBLEU tokenizer: auto (char for char datasets, else 13a), 13a, char, zh, none")
      ->capture_default_str()
      ->check(  // before any decoding, not when the split's score is computed
          [](const std::string& name) {
            if (name == "auto") return std::string();
            try {
              eval::metrics::bleu_tokenizer(name);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what()) + ", or auto";
            }
          },
          "TOKENIZER");
  app.add_option("--batch-tokens", cli.eval.batch_tokens, "tokens per batch")
      ->capture_default_str()
      ->check(kPositive);
  app.add_option("--progress-s", cli.eval.progress_s,
                 "seconds between progress lines (done, rate, ETA)")
      ->capture_default_str()
      ->check(kNonNegative);
  app.add_flag("--watch", cli.watch,
               "score every checkpoint as it appears until the run is finished");
  app.add_option("--poll-s", cli.poll_s, "--watch: seconds between looks for new checkpoints")
      ->capture_default_str();
  auto* translate =
      app.add_option("--translate", cli.translate,
                     "translate (or classify) this file's lines (- for stdin) to stdout");
  // A job does one thing: scoring one checkpoint, watching a run or
  // translating; options of another are refused, not silently ignored.
  for (const char* other : {"--watch", "--split", "--out", "--bleu-tokenize", "--progress-s"})
    translate->excludes(other);
  for (const char* other : {"--checkpoint", "--average-last", "--save-weights", "--out"})
    app.get_option("--watch")->excludes(other);
  app.get_option("--poll-s")->needs("--watch");
  app.add_option_function<std::string>(
         "--device",
         [&cli](const std::string& name) {
           cli.device = settings::value_of(choices::kDeviceNames, name);
         },
         "auto (a GPU when there is one for the rank), cpu or cuda")
      ->default_str(settings::name_of(choices::kDeviceNames, cli.device))
      ->check(CLI::IsMember(choices::kDeviceNames));
  app.add_option("--keep-freed-memory", cli.keep_freed_memory,
                 "malloc keeps the memory a decoding step frees for the next step's tensors "
                 "(the peak stays resident); false: glibc's default")
      ->default_str("true");
  app.add_option("--threads", cli.threads,
                 "torch threads per rank (0 = the rank's share of its node's cores)")
      ->capture_default_str()
      ->check(kNonNegative);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (process.is_main()) app.exit(e);  // prints help or the usage error
    return e.get_exit_code() == 0 ? 0 : 2;
  }

  // Each decoding step allocates and frees its logits ([rows, vocabulary]:
  // tens of MB) and the caches' copies; with glibc's mmap threshold every one
  // page-faults back in (docs/performance.md, "Why the code is as it is").
  if (cli.keep_freed_memory) runtime::keep_freed_host_memory();
  runtime::setup_runtime(process.info(), cli.threads);
  try {
    return run(cli, process.info());
  } catch (const std::exception& e) {
    if (process.info().world_size > 1)
      process.abort(e.what(), 1);  // no rank left waiting in a collective
    logging::error("{}", e.what());
    return 1;
  }
}
