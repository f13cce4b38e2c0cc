// Prefetch: a background thread loads and collates the steps of a BatchPlan
// (each step's micro-batches), at most `depth` steps ahead of the training
// loop (bounded memory), while the loop computes.
//
//   Prefetcher prefetch(dataset, plan, 2);
//   while (auto next = prefetch.take()) { next->plan.step; next->batches[a].src; ... }
//
// An error while loading (a damaged shard, a bad token id) is rethrown by the
// take() that would have returned that step, naming the step, micro-batch and
// example ids besides the original message (which names the shard file).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "data_pipeline/batch_plan.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/collate.h"

namespace data {

struct LoadedStep {
  PlannedStep plan;
  std::vector<Batch> batches;  // [accum_steps] CPU tensors, plan.micro_batches' order
};

class Prefetcher {
 public:
  // pin_memory: the batches in page-locked memory, for asynchronous copies
  // to a CUDA device (Batch::pinned).
  Prefetcher(const Dataset& dataset, BatchPlan plan, size_t depth, bool pin_memory = false);
  ~Prefetcher();  // stops and joins the thread

  // The next step of the plan; nullopt when the plan is done.
  std::optional<LoadedStep> take();

  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

 private:
  void work();

  const Dataset& dataset_;
  BatchPlan plan_;
  const size_t depth_;
  const bool pin_memory_;

  std::mutex mutex_;
  std::condition_variable ready_cv_, space_cv_;
  std::deque<LoadedStep> ready_;
  std::exception_ptr error_;
  bool done_ = false;  // the plan is exhausted (or failed)
  bool stop_ = false;
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace data
