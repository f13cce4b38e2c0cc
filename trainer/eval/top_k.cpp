#include "trainer/eval/top_k.h"

namespace eval {

namespace {

// The k best of row x [V] into values [k] and indices [k], best first.
void top_k_of_row(const float* x, int64_t V, int64_t k, float* values, int64_t* indices) {
  int64_t filled = 0;
  for (int64_t j = 0; j < V; ++j) {
    const float v = x[j];
    if (filled == k && !(v > values[k - 1])) continue;  // the common case: not among the k best
    // Insertion: the entries below v move down one place (the k-th falls out).
    int64_t i = filled < k ? filled++ : k - 1;
    for (; i > 0 && values[i - 1] < v; --i) {
      values[i] = values[i - 1];
      indices[i] = indices[i - 1];
    }
    values[i] = v;
    indices[i] = j;
  }
}

}  // namespace

std::tuple<torch::Tensor, torch::Tensor> top_k(const torch::Tensor& x, int64_t k) {
  TORCH_CHECK(x.dim() == 2 && k >= 1 && k <= x.size(1), "top_k: x [N, V] and 1 <= k <= V, got ",
              x.sizes(), " and k = ", k);
  if (!x.is_cpu()) {
    auto [values, indices] = x.topk(k, 1);
    return {values, indices};
  }
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "top_k: float32 on the CPU, got ",
              x.scalar_type());
  const auto rows = x.contiguous();
  const int64_t n = rows.size(0), V = rows.size(1);
  auto values = torch::empty({n, k}, torch::kFloat32);
  auto indices = torch::empty({n, k}, torch::kLong);
  const float* in = rows.data_ptr<float>();
  float* value = values.data_ptr<float>();
  int64_t* index = indices.data_ptr<int64_t>();
  // One thread: the scan is bound by memory (on a mid beam step 51 MB of
  // log-probs just written), and two threads took as long here.
  for (int64_t r = 0; r < n; ++r) top_k_of_row(in + r * V, V, k, value + r * k, index + r * k);
  return {values, indices};
}

}  // namespace eval
