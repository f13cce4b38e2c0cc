#include "trainer/eval/rows_in_parallel.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>

namespace eval {

Hypotheses decode_rows_in_parallel(const torch::Tensor& src, int64_t pad, int threads,
                                   const std::function<Hypotheses(const torch::Tensor&)>& decode) {
  const int64_t n = std::min<int64_t>(threads, src.size(0));
  std::vector<torch::Tensor> shares;  // [B_i, S_i]: S_i its longest source, eos included
  for (int64_t i = 0; i < n; ++i) {
    const auto share = src.slice(0, i, src.size(0), n);
    const int64_t width = share.ne(pad).sum(1).max().item<int64_t>();
    shares.push_back(share.narrow(1, 0, width));
  }
  std::vector<Hypotheses> decoded(n);
  std::vector<std::exception_ptr> errors(n);
  // LibTorch's thread count (ATen/ParallelOpenMP.cpp, 1.13 and 2.x): set_num_threads
  // stores a process-wide count, which a thread's first parallel operation
  // adopts, and sets the calling thread's OpenMP team size, which OpenBLAS
  // reads for each call (MKL's is set per thread too). A new thread starts
  // with OpenMP's default team (every core), so each share's thread sets 1
  // itself, after this thread has set the process-wide count to 1.
  const bool grad = torch::GradMode::is_enabled();  // thread-local: each share runs as this one
  const auto run = [&](int64_t i) {
    try {
      torch::AutoGradMode grad_mode(grad);
      torch::set_num_threads(1);
      decoded[i] = decode(shares[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  torch::set_num_threads(1);
  {
    std::vector<std::thread> workers;
    for (int64_t i = 1; i < n; ++i) {
      try {
        workers.emplace_back(run, i);
      } catch (const std::system_error&) {  // no thread to be had: this one decodes it
        run(i);
      }
    }
    run(0);
    for (auto& worker : workers) worker.join();
  }
  torch::set_num_threads(threads);
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  Hypotheses out(src.size(0));
  for (int64_t i = 0; i < n; ++i)
    for (size_t j = 0; j < decoded[i].size(); ++j) out[i + n * j] = std::move(decoded[i][j]);
  return out;
}

}  // namespace eval
