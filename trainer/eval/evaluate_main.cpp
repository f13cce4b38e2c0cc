// evaluate: scores a training run's checkpoint on a dataset split.
//
//   build/bin/evaluate --run runs/default --split test [--checkpoint latest|<dir>]
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

#include "launch/logging.h"
#include "launch/process.h"
#include "trainer/runtime/runtime.h"
#include "trainer/eval/evaluation.h"

int main(int argc, char** argv) {
  launch::Process& process = launch::Process::init(argc, argv);
  launch::setup_logging(process.info());

  CLI::App app{"Evaluate a checkpoint: loss/perplexity, greedy decoding, exact match"};
  eval::EvalOptions options;
  int threads = 0;
  app.add_option("--run", options.run_dir, "run directory (runs/<name>)")->required()->check(CLI::ExistingDirectory);
  app.add_option("--split", options.split, "dataset split")->capture_default_str();
  app.add_option("--checkpoint", options.checkpoint, "latest or a checkpoint directory")->capture_default_str();
  app.add_option("--data", options.data_dir, "dataset directory (default: the run's data.dir)");
  app.add_option("--out", options.out_dir, "output directory (default: <run>/eval/<split>-<checkpoint>)");
  app.add_option("--batch-tokens", options.batch_tokens, "tokens per batch")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "torch threads (0 = all usable cores)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  runtime::setup_runtime(process.info(), threads);
  try {
    std::cout << eval::run_evaluation(options).dump(2) << std::endl;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
