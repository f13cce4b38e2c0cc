// The hardware limit for MFU: GFLOP/s of one square matrix product
// C = A B (2 N^3 FLOP) through LibTorch, as the model's linear layers call it,
// in float32 and bfloat16, with the given numbers of threads.
//
//   build/bench/gemm_peak_bench [sizes=1024,2048] [threads=1,2] [seconds per cell=1]
//
// Prints one JSON line per (dtype, N, threads): the best and the median
// GFLOP/s over the timed repetitions (after two untimed ones).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> list_of(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoll(item));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const auto sizes = list_of(argc > 1 ? argv[1] : "1024,2048");
  const auto thread_counts = list_of(argc > 2 ? argv[2] : "1,2");
  const double min_seconds = argc > 3 ? std::stod(argv[3]) : 1.0;
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    for (const int64_t n : sizes) {
      for (const int64_t threads : thread_counts) {
        torch::set_num_threads(static_cast<int>(threads));
        const auto a = torch::randn({n, n}).to(dtype), b = torch::randn({n, n}).to(dtype);
        auto c = torch::empty({n, n}, dtype);
        torch::mm_out(c, a, b);
        torch::mm_out(c, a, b);
        std::vector<double> seconds;
        const auto begin = Clock::now();
        while (seconds.size() < 3 ||
               (std::chrono::duration<double>(Clock::now() - begin).count() < min_seconds &&
                seconds.size() < 50)) {
          const auto start = Clock::now();
          torch::mm_out(c, a, b);
          seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
        }
        std::sort(seconds.begin(), seconds.end());
        const double flop = 2.0 * static_cast<double>(n) * n * n;
        std::printf(
            "{\"dtype\": \"%s\", \"n\": %ld, \"threads\": %ld, \"reps\": %zu, \"gflops_best\": "
            "%.1f, "
            "\"gflops_median\": %.1f}\n",
            dtype == torch::kFloat32 ? "fp32" : "bf16", static_cast<long>(n),
            static_cast<long>(threads), seconds.size(), flop / seconds.front() / 1e9,
            flop / seconds[seconds.size() / 2] / 1e9);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
