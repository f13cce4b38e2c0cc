#include "data_pipeline/loader/prefetcher.h"

#include <stdexcept>
#include <string>

namespace data {

namespace {

std::string describe(int64_t step, const PlannedMicroBatch& planned, const Dataset& dataset) {
  std::string ids;
  for (size_t k = 0; k < planned.indices.size() && k < 8; ++k)
    ids += (k ? ", " : "") + std::to_string(planned.indices[k]);
  if (planned.indices.size() > 8) ids += ", ...";
  return "loading micro-batch " + std::to_string(planned.accum) + " of step " +
         std::to_string(step) + " (split '" + dataset.split() + "', examples " + ids + ")";
}

Batch load(const PlannedMicroBatch& planned, const Dataset& dataset, bool pin_memory) {
  std::vector<Example> examples;
  examples.reserve(planned.indices.size());
  for (int64_t i : planned.indices) examples.push_back(dataset.get(i));
  Batch batch = collate(examples, dataset.manifest().special);
  return pin_memory ? batch.pinned() : batch;
}

}  // namespace

Prefetcher::Prefetcher(const Dataset& dataset, BatchPlan plan, size_t depth, bool pin_memory)
    : dataset_(dataset),
      plan_(std::move(plan)),
      depth_(depth < 1 ? 1 : depth),
      pin_memory_(pin_memory),
      thread_([this] { work(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_cv_.notify_all();
  thread_.join();
}

void Prefetcher::work() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_cv_.wait(lock, [this] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
    }
    std::optional<PlannedStep> planned;
    LoadedStep loaded;
    std::string where = "planning the next batch";
    try {
      planned = plan_.next_step();
      if (planned) {
        for (const PlannedMicroBatch& micro : planned->micro_batches) {
          where = describe(planned->step, micro, dataset_);
          loaded.batches.push_back(load(micro, dataset_, pin_memory_));
        }
        loaded.plan = std::move(*planned);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::make_exception_ptr(std::runtime_error(where + ": " + e.what()));
      done_ = true;
      ready_cv_.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!planned) {
      done_ = true;
      ready_cv_.notify_all();
      return;
    }
    ready_.push_back(std::move(loaded));
    ready_cv_.notify_all();
  }
}

std::optional<LoadedStep> Prefetcher::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [this] { return !ready_.empty() || done_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return std::nullopt;
  }
  LoadedStep next = std::move(ready_.front());
  ready_.pop_front();
  space_cv_.notify_all();
  return next;
}

}  // namespace data
