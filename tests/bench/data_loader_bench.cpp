// Reader + batcher throughput: target tokens/s the data side can deliver to
// one rank, read from a prepared dataset (lazy reader, hyperslab reads), and
// the peak memory of doing so, side by side:
//   - synchronous: BatchPlan -> Dataset::get -> collate, in the loop;
//   - prefetched:  the same through the background Prefetcher (what the trainer uses);
//   - in order:    examples 0, 1, 2, ... collated into batches of batch_tokens
//                  (each chunk is read, and its checksum verified, once).
// Random batches read a whole chunk per example; in order, a chunk serves
// many examples: the two bound the cost of reading (and checking) chunks.
//
//   build/bench/data_loader_bench <dataset dir> [batch_tokens=4096] [seconds=10]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data_pipeline/batch_plan.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/prefetcher.h"
#include "data_pipeline/shard_reader.h"

namespace {

using Clock = std::chrono::steady_clock;

// Peak resident memory of this process so far (VmHWM), MiB.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <dataset dir> [batch_tokens] [seconds]\n", argv[0]);
    return 2;
  }
  const int64_t batch_tokens = argc > 2 ? std::stoll(argv[2]) : 4096;
  const double seconds = argc > 3 ? std::stod(argv[3]) : 10;
  const auto opened = Clock::now();
  const data::Dataset train(argv[1], "train");
  const double open_s = std::chrono::duration<double>(Clock::now() - opened).count();
  data::BatcherOptions options;
  options.batch_tokens = batch_tokens;
  options.max_len = batch_tokens - 1;
  const data::Batcher batcher(train.lengths(), options);
  const auto& shards = train.manifest().splits.at("train").shards;
  const data::ShardReader first_shard(std::filesystem::path(argv[1]) / shards.front().file);
  std::printf(
      "dataset %s: %ld examples in %zu shards (format_version %ld), opened in %.2f s, "
      "peak RSS %.0f MiB\n",
      argv[1], static_cast<long>(train.size()), shards.size(),
      static_cast<long>(first_shard.format_version()), open_s, peak_rss_mib());

  const auto run = [&](const char* name, auto&& next_tokens) {
    const auto start = Clock::now();
    double tokens = 0, elapsed = 0;
    int64_t batches = 0;
    while (elapsed < seconds) {
      const int64_t t = next_tokens();
      if (t < 0) break;
      tokens += t;
      ++batches;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::printf("| %s | %ld | %.0f | %.0f |\n", name, static_cast<long>(batches), tokens / elapsed,
                peak_rss_mib());
  };
  std::printf("| loader | batches | target tokens/s | peak RSS MiB |\n|---|---|---|---|\n");
  data::BatchPlan plan(batcher, {1, 0, 1, 0, 0});
  run("synchronous", [&]() -> int64_t {
    auto next = plan.next_step();
    if (!next) return -1;
    std::vector<data::Example> examples;
    for (int64_t i : next->micro_batches[0].indices) examples.push_back(train.get(i));
    return data::collate(examples, train.manifest().special).num_tgt_tokens;
  });
  data::Prefetcher prefetch(train, data::BatchPlan(batcher, {1, 0, 1, 0, 0}), 8);
  run("prefetched", [&]() -> int64_t {
    auto next = prefetch.take();
    return next ? next->batches[0].num_tgt_tokens : -1;
  });
  int64_t next_example = 0;
  run("in order", [&]() -> int64_t {
    std::vector<data::Example> examples;
    for (int64_t tokens = 0; tokens < batch_tokens && next_example < train.size(); ++next_example) {
      examples.push_back(train.get(next_example));
      tokens += static_cast<int64_t>(examples.back().src.size() + examples.back().tgt.size()) + 2;
    }
    if (examples.empty()) return -1;
    return data::collate(examples, train.manifest().special).num_tgt_tokens;
  });
  return 0;
}
