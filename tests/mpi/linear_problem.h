// The gradient-sync tests' problem (tests/mpi/*_test.cpp): parameters of
// assorted shapes whose gradients are integers known from the rank, so that
// every sum over ranks is exact and the expected result is a formula.
#pragma once
#include <torch/torch.h>

#include <vector>

#include "tests/mpi/mpi_test_ranks.h"
#include "trainer/distributed/grad_sync.h"

// Parameters of assorted shapes; loss = sum_i <p_i, c_i(rank)>, so the
// gradient of p_i on a rank is exactly c_i(rank).
struct LinearProblem {
  std::vector<torch::Tensor> params;
  LinearProblem() {
    for (auto shape : std::vector<std::vector<int64_t>>{{3, 4}, {10}, {7, 2}, {1}, {50}, {2, 2, 2}})
      params.push_back(torch::zeros(shape, torch::requires_grad()));
  }
  // Integer coefficients, different per rank, parameter and micro-batch.
  torch::Tensor coefficient(size_t i, int r, int micro) const {
    return torch::arange(params[i].numel())
        .remainder(5)
        .add(static_cast<int64_t>(r * 7 + i + 3 * micro))
        .to(torch::kFloat)
        .view_as(params[i]);
  }
  void backward(int micro, const std::vector<size_t>& used) const {
    torch::Tensor loss = torch::zeros({});
    for (size_t i : used) loss = loss + (params[i] * coefficient(i, rank(), micro)).sum();
    loss.backward();
  }
  std::vector<size_t> all() const {
    std::vector<size_t> v(params.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }
};

inline distributed::GradSyncOptions options(int64_t bucket_bytes, bool overlap) {
  distributed::GradSyncOptions o;
  o.bucket_bytes = bucket_bytes;
  o.overlap = overlap;
  return o;
}
