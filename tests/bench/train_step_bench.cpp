// One training step of the encoder-decoder, phase by phase, without the data
// pipeline or ranks: the model, the label-smoothed loss and Adam on synthetic
// batches shaped like the PyTorch reference's (../shared/peer/annotated_train.py):
// B sentences of random tokens, S source and T target positions, no padding.
//
//   build/bench/train_step_bench [size=base|small|default] [threads=1]
//                                [precision=fp32|tf32|bf16] [steps=8] [trace=<file>|""]
//                                [device=cpu|cuda] [sentences=<B>]
//
// Prints one JSON line: median seconds per step of forward (+ loss), backward
// and the optimizer (the first 2 steps excluded), target tokens/s and peak
// RSS. On a GPU each phase ends with a device synchronisation, so the times are
// the GPU's. With a trace file, one more step runs under LibTorch's profiler
// and its operators are written as a chrome://tracing file. Beside the
// trainer on the same batch shape (tests/bench/gpu_benchmarks.sh), it is the
// step without data loading, ranks or logging. KERNEL_PROFILE=<file>: one
// more step under the Kineto profiler, its top kernels and launches written
// there as JSON (kernel_profile.h).
#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "base/seconds.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/kernel_profile.h"
#include "trainer/config/run_config.h"
#include "trainer/model/masks.h"
#include "trainer/model/transformer.h"
#include "trainer/runtime/host_memory.h"
#include "trainer/runtime/precision.h"
#include "trainer/task/label_smoothing.h"
#include "trainer/train/adam_step.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Size {
  model::ModelConfig model;
  int64_t sentences, length;  // per step: sentences × length target tokens
};

Size size_of(const std::string& name) {
  Size s;  // paper base: d 512, 8 heads, 6 + 6 layers, d_ff 2048, vocab 32000; 32 × 32 tokens
  s.model.src_vocab = s.model.tgt_vocab = 32000;
  s.sentences = 32, s.length = 32;
  if (name == "small") {
    s.model.d_model = 256, s.model.heads = 4, s.model.d_ff = 1024;
    s.model.encoder_layers = s.model.decoder_layers = 3;
    s.model.src_vocab = s.model.tgt_vocab = 8000;
    s.sentences = 64;
  } else if (name == "default") {
    s.model.d_model = 128, s.model.heads = 4, s.model.d_ff = 512;
    s.model.encoder_layers = s.model.decoder_layers = 2;
    s.model.src_vocab = s.model.tgt_vocab = 24;
    s.sentences = 160, s.length = 12;
  } else if (name != "base") {
    throw std::invalid_argument("size must be base, small or default");
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const auto arg = [&](int i, const char* fallback) {
    return std::string(argc > i && *argv[i] ? argv[i] : fallback);
  };
  const std::string size_name = arg(1, "base");
  const int threads = std::stoi(arg(2, "1"));
  const std::string precision_name = arg(3, "fp32");
  const int steps = std::stoi(arg(4, "8"));
  const std::string trace = arg(5, "");
  const torch::Device device(arg(6, "cpu"));
  torch::set_num_threads(threads);
  runtime::keep_freed_host_memory();  // as the trainer (train.keep_freed_memory)
  torch::set_num_interop_threads(1);
  torch::manual_seed(1);

  Size size = size_of(size_name);
  if (argc > 7) size.sentences = std::stoll(argv[7]);
  config::RunConfig defaults;  // the trainer's choices for this build (attention kernels)
  defaults.model = size.model;
  size.model = defaults.model_config(size.model.src_vocab, size.model.tgt_vocab, size.model.pad_id);
  // tf32: fp32 with TF32 matrix products on CUDA (train.tf32)
  const choices::Precision precision =
      runtime::parse_precision(precision_name == "tf32" ? "fp32" : precision_name);
  runtime::use_tf32(precision_name == "tf32");
  model::EncoderDecoder model(size.model);
  model->to(device);
  model->train();
  torch::optim::Adam adam(model->parameters(),
                          torch::optim::AdamOptions(1e-4).betas({0.9, 0.98}).eps(1e-9));
  train::AdamStep adam_step(adam);  // the trainer's update
  const torch::Tensor grad_factor = torch::ones({}, torch::dtype(torch::kDouble).device(device));
  const torch::Tensor no_skip = torch::zeros({}, torch::dtype(torch::kBool).device(device));
  const task::LabelSmoothingLoss smoothing(size.model.tgt_vocab, size.model.pad_id, 0.1);
  const int64_t B = size.sentences, T = size.length;
  const auto ids = torch::dtype(torch::kLong).device(device);
  const auto src = torch::randint(4, size.model.src_vocab, {B, T}, ids);      // [B, S]
  const auto tgt = torch::randint(4, size.model.tgt_vocab, {B, T + 1}, ids);  // [B, T + 1]
  const auto tgt_in = tgt.slice(1, 0, T), tgt_out = tgt.slice(1, 1);          // [B, T] each

  const auto phase_end = [&] {  // the device's work done, not only queued
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  const auto step = [&](std::vector<double>& fwd, std::vector<double>& bwd,
                        std::vector<double>& opt) {
    auto start = Clock::now();
    torch::Tensor loss;
    {
      runtime::AutocastScope autocast(precision, device);
      // As the trainer's objective builds them for a batch without padding.
      const auto src_mask = model::source_mask(src, size.model.pad_id, /*padded=*/false);
      const auto tgt_mask = model::target_mask();
      loss = smoothing(model->logits(src, tgt_in, src_mask, tgt_mask), tgt_out).smoothed / (B * T);
    }
    phase_end();
    fwd.push_back(base::seconds_since(start));
    start = Clock::now();
    loss.backward();
    phase_end();
    bwd.push_back(base::seconds_since(start));
    start = Clock::now();
    adam_step(1e-4, grad_factor, no_skip);
    adam.zero_grad();
    phase_end();
    opt.push_back(base::seconds_since(start));
  };

  std::vector<double> fwd, bwd, opt;
  for (int i = 0; i < steps; ++i) step(fwd, bwd, opt);
  for (auto* v : {&fwd, &bwd, &opt})
    v->erase(v->begin(), v->begin() + std::min<size_t>(2, v->size() - 1));
  std::vector<double> ignored[3];
  const auto one_more_step = [&] { step(ignored[0], ignored[1], ignored[2]); };
  if (!trace.empty()) {
    torch::autograd::profiler::RecordProfile profile(trace);
    one_more_step();
  }
  if (const char* profile = std::getenv("KERNEL_PROFILE"); profile != nullptr && *profile)
    if (!bench::write_kernel_profile(one_more_step, device, profile))
      std::fprintf(stderr, "KERNEL_PROFILE: no profile written to %s (LibTorch 1.x, or the file)\n",
                   profile);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double f = bench::median(fwd), b = bench::median(bwd), o = bench::median(opt);
  std::printf(
      "{\"size\": \"%s\", \"device\": \"%s\", \"threads\": %d, \"precision\": \"%s\", "
      "\"steps\": %zu, "
      "\"forward_s\": %.4f, \"backward_s\": %.4f, \"optimizer_s\": %.4f, \"step_s\": %.4f, "
      "\"tokens_per_s\": %.1f, \"peak_rss_mb\": %.0f}\n",
      size_name.c_str(), device.str().c_str(), threads, precision_name.c_str(), fwd.size(), f, b, o,
      f + b + o, static_cast<double>(B * T) / (f + b + o), usage.ru_maxrss / 1024.0);
  return 0;
}
