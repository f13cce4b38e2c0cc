// What a checkpoint costs the training, side by side in one run: the save as
// the trainer made it before (the files written from the live tensors while
// every rank waits) against the background save (the snapshot copied to host
// memory; the files written by a thread while training goes on), on the
// paper's base model with Adam's moments.
//
//   build/bench/checkpoint_bench [--dir /tmp/ckpt-bench] [--vocab 37000] [--separate]
//
// --separate: untied source, target and output embeddings (a larger file).
// Prints per variant the median of 4 saves (the background save's first, which
// allocates its host buffers, apart) of: the time training stops, and for the
// background save the time until its thread had written; the directory is on
// the file system the runs use (--dir).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "launch/ranks.h"
#include "base/seconds.h"
#include "tests/bench/bench_stats.h"
#include "trainer/checkpoint/background_save.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/model/transformer.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::string dir = "/tmp/checkpoint-bench";
  int64_t vocab = 37000;  // the paper's shared English-German BPE vocabulary
  bool separate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (arg == "--vocab" && i + 1 < argc)
      vocab = std::stoll(argv[++i]);
    else if (arg == "--separate")
      separate = true;
    else {
      std::fprintf(stderr, "usage: checkpoint_bench [--dir D] [--vocab N] [--separate]\n");
      return 2;
    }
  }
  model::ModelConfig config;  // base: d_model 512, h 8, d_ff 2048, 6 + 6 layers
  config.src_vocab = config.tgt_vocab = vocab;
  config.share_embeddings = config.tie_output = !separate;
  model::EncoderDecoder transformer(config);
  torch::optim::Adam adam(transformer->parameters(), torch::optim::AdamOptions(1e-4));
  for (auto& p : transformer->parameters()) p.mutable_grad() = torch::randn_like(p);
  adam.step();  // moments for every parameter

  std::filesystem::remove_all(dir);
  const checkpoint::Checkpoints checkpoints(dir, 2);
  double bytes = 0;
  for (const auto& [name, t] : checkpoint::named_state(*transformer))
    bytes += static_cast<double>(t.numel() * t.element_size());
  std::printf(
      "# checkpoint of the base Transformer (vocabulary %lld, %s): %.0f MB of weights, "
      "%.0f MB with Adam's moments; in %s\n",
      static_cast<long long>(vocab), separate ? "separate embeddings" : "shared embeddings",
      bytes / 1e6, 3 * bytes / 1e6, dir.c_str());

  // Round 0 of the background save allocates its snapshot's host memory;
  // the later rounds reuse it, as every save of a run after its first does.
  std::vector<double> sync_stall, async_stall, async_write;
  double first_stall = 0;
  int64_t step = 0;
  const launch::Ranks one_process;
  checkpoint::BackgroundSave saver(checkpoints, one_process);
  for (int round = 0; round < 4; ++round) {
    // Before: the files written from the live tensors, training waiting.
    auto begin = Clock::now();
    ++step;
    checkpoints.save(checkpoint::Snapshot{
        step, checkpoint::whole_checkpoint(*transformer, adam, {{"step", step}})});
    sync_stall.push_back(base::seconds_since(begin));

    // Now: the snapshot, then training goes on while a thread writes it.
    begin = Clock::now();
    ++step;
    saver.save(step, checkpoint::whole_checkpoint(*transformer, adam, {{"step", step}}), false);
    const double stall = base::seconds_since(begin);
    saver.finish();
    if (round == 0) {
      first_stall = stall;
      continue;
    }
    async_stall.push_back(stall);
    async_write.push_back(base::seconds_since(begin));
  }
  const double before = bench::median(sync_stall), now = bench::median(async_stall);
  std::printf("| save | training stops (s) | written after (s) |\n|---|---|---|\n");
  std::printf("| synchronous (before) | %.3f | %.3f |\n", before, before);
  std::printf("| background, first save of a run (allocates) | %.3f | |\n", first_stall);
  std::printf("| background, every later save | %.3f | %.3f |\n", now, bench::median(async_write));
  std::printf("stall: background / synchronous = %.3f\n", now / before);
  std::filesystem::remove_all(dir);
  return 0;
}
