// trainer: data-parallel training of the Transformer, one process per rank.
//
//   mpirun -np 2 build/bin/trainer --config configs/default.toml [--section.key value ...]
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "launch/logging.h"
#include "launch/process.h"
#include "launch/runtime.h"
#include "trainer/config/run_config.h"
#include "trainer/train/training.h"

int main(int argc, char** argv) {
  launch::Process& process = launch::Process::init(argc, argv);
  launch::setup_logging(process.info());

  CLI::App app{"Train the Transformer (run under mpirun for several ranks)"};
  config::RunConfigOptions options(app);
  try {
    app.parse(argc, argv);
    options.resolve();
  } catch (const CLI::ParseError& e) {
    return process.is_main() ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 2;
  }

  const config::RunConfig& cfg = options.config();
  launch::setup_runtime(process.info(), static_cast<int>(cfg.train.threads));
  spdlog::info("resolved config:\n{}", options.to_toml());
  try {
    train::run_training(cfg, options.to_toml(), process.info());
  } catch (const std::exception& e) {
    if (process.info().world_size == 1) {
      spdlog::error("{}", e.what());
      return 1;
    }
    process.abort(e.what());
  }
  return 0;
}
