// evaluate --watch: a job beside training that scores each checkpoint of a
// run as it appears.
//
// Every poll, rank 0 lists the run's checkpoints and takes the oldest one not
// yet in the results table <run>/eval/watch-<split>.tsv; all ranks score it
// (evaluation.h; its outputs go to <run>/eval/<split>-step_N) and rank 0
// appends a row:
//
//   step  loss  ppl  bleu  chrf  exact_match  accuracy  seconds  checkpoint
//   ("-" where a metric does not apply to the task)
//
// Checkpoints already in the table are skipped, so a restarted watcher
// carries on. A checkpoint that training prunes before it is scored is
// logged and skipped. The job ends when the run is marked finished
// (train/finished_marker.h) and nothing is left to score.
#pragma once
#include <string>

#include "launch/process.h"
#include "launch/ranks.h"
#include "trainer/eval/evaluation.h"

namespace eval {

struct WatchOptions {
  std::string run_dir;
  std::string data_dir;  // empty: the run's data.dir
  double poll_s = 30;    // seconds between looks when nothing is new
  torch::Device device = torch::kCPU;
};

// Returns when the run is finished and every checkpoint is scored. Collective.
void watch_run(const WatchOptions& watch, EvalOptions options, const launch::Ranks& ranks,
               const launch::ProcessInfo& process);

}  // namespace eval
