// trainer: data-parallel training of the Transformer, one process per rank.
//
//   mpirun -np 2 build/bin/trainer --config configs/default.toml [--section.key value ...]
//                                  [--resume latest|best|none|<checkpoint dir>]
//   trainer --config-reference     every config key, its default and values (Markdown)
//
// Exit codes (train/exit_codes.h): 0 done, 1 error, 2 bad usage/config,
// 75 preempted (checkpoint saved; run the same command again), 124 watchdog.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "base/logging.h"
#include "launch/process.h"
#include "trainer/config/run_config.h"
#include "trainer/runtime/host_memory.h"
#include "trainer/runtime/runtime.h"
#include "trainer/train/exit_codes.h"
#include "trainer/train/preemption.h"
#include "trainer/train/training.h"
#include "trainer/train/watchdog.h"

namespace {

// MPI start-up is collective: a peer that never arrives (stopped, lost)
// would block this rank before the configured watchdog exists. A fixed
// start-up watchdog covers that window: TRAINER_STARTUP_TIMEOUT_S, seconds,
// default 300; 0 turns it off. Anything but a finite number >= 0 is refused
// (not read as 0, which would turn the watchdog off unasked).
constexpr char kStartupTimeout[] = "TRAINER_STARTUP_TIMEOUT_S";
std::optional<double> startup_timeout() {
  const char* value = std::getenv(kStartupTimeout);
  if (value == nullptr) return 300.0;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || errno == ERANGE || !std::isfinite(seconds) || seconds < 0)
    return std::nullopt;
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<double> startup_s = startup_timeout();
  if (!startup_s) {  // before MPI and logging: the one line goes to stderr
    std::cerr << "trainer: " << kStartupTimeout << " must be seconds (a number >= 0; 0: no "
              << "start-up watchdog), not '" << std::getenv(kStartupTimeout) << "'\n";
    return train::kExitUsage;
  }
  auto startup_watchdog = std::make_unique<train::Watchdog>(*startup_s, -1, 10, kStartupTimeout);
  launch::Process& process = launch::Process::init(argc, argv);
  // From here to the end, USR1 or TERM is a request to checkpoint and stop:
  // one during start-up stops at the first step, one after the run's end
  // changes nothing (the run is complete), neither kills the process.
  train::PreemptionSignals signals;
  logging::setup(process.info().rank);

  CLI::App app{"Train the Transformer (run under mpirun for several ranks)"};
  config::RunConfigOptions options(app);
  auto resume = checkpoint::CheckpointChoice::latest();
  app.add_option_function<std::string>(
         "--resume",
         [&resume](const std::string& text) {
           try {
             resume = checkpoint::CheckpointChoice::parse(text);
           } catch (const std::invalid_argument& e) {
             throw std::invalid_argument(std::string("--resume: ") + e.what());
           }
         },
         "latest: the run's newest checkpoint that verifies, else a fresh start ('auto' is the "
         "same); best: the run's best; none: a fresh start; or a checkpoint directory (the words "
         "of evaluate's --checkpoint)")
      ->type_name("latest|best|none|DIR")
      ->default_str(resume.text())
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a script's default, then yours
  bool reference = false;
  app.add_flag("--config-reference", reference,
               "print every config key with its default and allowed values (Markdown) and exit");
  try {
    app.parse(argc, argv);
    if (reference) {
      if (process.is_main()) std::cout << options.reference();
      return 0;
    }
    options.resolve();
  } catch (const CLI::ParseError& e) {
    if (process.is_main()) app.exit(e);  // prints the help, or the error
    // CLI11's own codes (105, 109, ...) are one number: a bad command line, 2.
    return e.get_exit_code() == 0 ? 0 : train::kExitUsage;
  } catch (const std::exception& e) {
    logging::error("{}", e.what());
    return train::kExitUsage;
  }

  const config::RunConfig& cfg = options.config();
  // From here to MPI_Finalize, a rank that stops making progress (a peer
  // stopped or hung in a collective, start-up and shutdown included) ends the job.
  train::Watchdog watchdog(cfg.train.watchdog_s, process.info().rank);
  startup_watchdog.reset();
  if (cfg.train.keep_freed_memory) runtime::keep_freed_host_memory();
  runtime::setup_runtime(process.info(), static_cast<int>(cfg.train.threads));
  logging::info("resolved config:\n{}", options.to_toml());
  int code = train::kExitFailed;
  try {
    code = train::run_training(cfg, resume, process.info(), watchdog, signals);
  } catch (const std::exception& e) {
    if (process.info().world_size == 1) {
      logging::error("{}", e.what());
      return train::kExitFailed;
    }
    process.abort(e.what(), train::kExitFailed);
  }
  signals.settle(code);
  watchdog.beat("MPI_Finalize");
  process.finalize();
  return code;
}
