// The training loss alone, forward and backward, on [N, V] logits shaped like
// the paper-base generator's output (V 32000), beside LibTorch's own loss of
// the same work: torch::nn::functional::cross_entropy with label smoothing
// (log-softmax, then the smoothed negative log-likelihood; it spreads eps over
// all V classes, ours over V - 2, which costs the same).
//
//   build/bench/loss_bench [tokens=4096] [vocab=32000] [dtype=fp32|bf16] [steps=10]
//                          [device=cpu|cuda] [threads=1]
//
// bf16 logits are what the generator gives under autocast; LibTorch's loss
// then reads them cast to float32, as autocast does for cross_entropy. Prints
// one JSON line: median milliseconds of forward and backward for each (the
// first 2 runs excluded), and ours / LibTorch's time per forward + backward.
// On a GPU each phase ends with a device synchronisation.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "tests/bench/bench_stats.h"
#include "trainer/runtime/host_memory.h"
#include "trainer/task/label_smoothing.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double forward_ms, backward_ms;
};

// Median forward and backward times of `loss` (a scalar from the logits).
Timing time_loss(const torch::Tensor& logits, int steps, const torch::Device& device,
                 const std::function<torch::Tensor(const torch::Tensor&)>& loss) {
  const auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  const auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  std::vector<double> fwd, bwd;
  for (int i = 0; i < steps + 2; ++i) {
    logits.mutable_grad().reset();
    sync();
    auto start = Clock::now();
    const torch::Tensor value = loss(logits);
    sync();
    fwd.push_back(ms_since(start));
    start = Clock::now();
    value.backward();
    sync();
    bwd.push_back(ms_since(start));
  }
  fwd.erase(fwd.begin(), fwd.begin() + 2);
  bwd.erase(bwd.begin(), bwd.begin() + 2);
  return {bench::median(fwd), bench::median(bwd)};
}

}  // namespace

int main(int argc, char** argv) {
  const auto arg = [&](int i, const char* fallback) {
    return std::string(argc > i && *argv[i] ? argv[i] : fallback);
  };
  const int64_t tokens = std::stoll(arg(1, "4096")), vocab = std::stoll(arg(2, "32000"));
  const std::string dtype_name = arg(3, "fp32");
  const int steps = std::stoi(arg(4, "10"));
  const torch::Device device(arg(5, "cpu"));
  torch::set_num_threads(std::stoi(arg(6, "1")));
  runtime::keep_freed_host_memory();  // as the trainer (train.keep_freed_memory)
  if (dtype_name != "fp32" && dtype_name != "bf16")
    throw std::invalid_argument("dtype must be fp32 or bf16");
  const auto dtype = dtype_name == "bf16" ? torch::kBFloat16 : torch::kFloat;

  const int64_t pad = 0;
  const double eps = 0.1;
  torch::manual_seed(1);
  const auto logits =
      (4 * torch::randn({tokens, vocab}, torch::device(device))).to(dtype).requires_grad_();
  auto target = torch::randint(1, vocab, {tokens}, torch::dtype(torch::kLong).device(device));
  target.slice(0, 0, tokens / 10).fill_(pad);  // a tenth padding, as in bucketed batches

  const task::LabelSmoothingLoss ours_loss(vocab, pad, eps);
  const Timing ours = time_loss(
      logits, steps, device, [&](const torch::Tensor& z) { return ours_loss(z, target).smoothed; });
  namespace F = torch::nn::functional;
  const Timing libtorch = time_loss(logits, steps, device, [&](const torch::Tensor& z) {
    return F::cross_entropy(
        z.to(torch::kFloat), target,
        F::CrossEntropyFuncOptions().label_smoothing(eps).ignore_index(pad).reduction(torch::kSum));
  });
  std::printf(
      "{\"device\": \"%s\", \"dtype\": \"%s\", \"tokens\": %lld, \"vocab\": %lld, "
      "\"ours_forward_ms\": %.2f, \"ours_backward_ms\": %.2f, "
      "\"libtorch_forward_ms\": %.2f, \"libtorch_backward_ms\": %.2f, "
      "\"ours_over_libtorch\": %.2f}\n",
      device.str().c_str(), dtype_name.c_str(), static_cast<long long>(tokens),
      static_cast<long long>(vocab), ours.forward_ms, ours.backward_ms, libtorch.forward_ms,
      libtorch.backward_ms,
      (ours.forward_ms + ours.backward_ms) / (libtorch.forward_ms + libtorch.backward_ms));
  return 0;
}
