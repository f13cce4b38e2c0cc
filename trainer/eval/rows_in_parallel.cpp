#include "trainer/eval/rows_in_parallel.h"

#include <ATen/ThreadLocalState.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace eval {

namespace {

// LibTorch's thread count (ATen/ParallelOpenMP.cpp, 1.13 and 2.x):
// set_num_threads stores a process-wide count, which a thread's first
// parallel operation adopts, and sets the calling thread's OpenMP team size,
// which OpenBLAS reads on each call (MKL's count is set per thread too). A new
// thread starts with OpenMP's default team (OMP_NUM_THREADS, else the usable
// cores), so each share's thread sets 1 itself. This thread sets 1 before any
// share's thread starts: OpenBLAS 0.3.21 then never reaches its own,
// unsynchronised, change of thread count.
class OneLibTorchThread {
 public:
  OneLibTorchThread() : before_(torch::get_num_threads()) { torch::set_num_threads(1); }
  ~OneLibTorchThread() { torch::set_num_threads(before_); }
  OneLibTorchThread(const OneLibTorchThread&) = delete;
  OneLibTorchThread& operator=(const OneLibTorchThread&) = delete;

 private:
  int before_;
};

}  // namespace

TokenSequences decode_rows_in_parallel(
    const torch::Tensor& src, int64_t pad, int shares,
    const std::function<TokenSequences(const torch::Tensor&)>& decode) {
  const int64_t n = std::min<int64_t>(shares, src.size(0));
  std::vector<torch::Tensor> rows;  // [B_i, S_i]: S_i its longest source, eos included
  for (int64_t i = 0; i < n; ++i) {
    const auto share = src.slice(0, i, src.size(0), n);
    rows.push_back(share.narrow(1, 0, share.ne(pad).sum(1).max().item<int64_t>()));
  }
  std::vector<TokenSequences> decoded(n);
  std::vector<std::exception_ptr> errors(n);
  const at::ThreadLocalState caller;  // grad mode, inference mode, dispatch keys, ...
  const auto run = [&](int64_t i) {
    try {
      at::ThreadLocalStateGuard as_caller(caller);
      torch::set_num_threads(1);
      decoded[i] = decode(rows[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  {
    const OneLibTorchThread one;
    std::vector<std::thread> workers;
    workers.reserve(n - 1);
    for (int64_t i = 1; i < n; ++i) {
      try {
        workers.emplace_back(run, i);
      } catch (...) {  // no thread to be had: this one decodes the share
        run(i);
      }
    }
    run(0);
    for (auto& worker : workers) worker.join();
  }
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  TokenSequences out(src.size(0));
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(decoded[i].size()) != rows[i].size(0))
      throw std::logic_error("decode_rows_in_parallel: share " + std::to_string(i) + " of " +
                             std::to_string(rows[i].size(0)) + " rows decoded to " +
                             std::to_string(decoded[i].size()) + " sequences");
    for (size_t j = 0; j < decoded[i].size(); ++j) out[i + n * j] = std::move(decoded[i][j]);
  }
  return out;
}

}  // namespace eval
