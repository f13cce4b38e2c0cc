#include "trainer/eval/top_k.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "base/cpu_clones.h"

namespace eval {

namespace {

// Inserts v, entry j, among the `filled` best so far, values [k] and indices
// [k] best first: the entries below it move down one place (a k-th falls out).
inline void insert(float v, int64_t j, int64_t k, int64_t& filled, float* values,
                   int64_t* indices) {
  int64_t i = filled < k ? filled++ : k - 1;
  for (; i > 0 && values[i - 1] < v; --i) {
    values[i] = values[i - 1];
    indices[i] = indices[i - 1];
  }
  values[i] = v;
  indices[i] = j;
}

// The float's bits as an int32 of the same order (for floats that are not
// NaN): the magnitude bits of a negative one flipped.
inline int32_t order_key(float v) {
  int32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits ^ ((bits >> 31) & 0x7fffffff);
}

constexpr int64_t kBlock = 64;  // entries a block of the scan

// The largest order_key of x [kBlock]: integer comparisons in 8 lanes, which
// vectorise (float comparisons do not, floating-point traps kept).
inline int32_t block_max_key(const float* x) {
  int32_t lane[8];
  for (int32_t& m : lane) m = std::numeric_limits<int32_t>::min();
  for (int64_t j = 0; j < kBlock; j += 8)
    for (int u = 0; u < 8; ++u) {
      const int32_t key = order_key(x[j + u]);
      lane[u] = key > lane[u] ? key : lane[u];
    }
  int32_t max = lane[0];
  for (int32_t m : lane) max = m > max ? m : max;
  return max;
}

// The k best of row x [V] into values [k] and indices [k], best first. Past
// the first k, a block none of whose entries beats the k-th best is skipped
// whole, and the others entry by entry; an entry that only equals the k-th
// does not enter (of equal values, the lower index first).
CLONED_FOR_AVX2
void top_k_of_row(const float* x, int64_t V, int64_t k, float* values, int64_t* indices) {
  int64_t filled = 0, j = 0;
  for (; j < V && filled < k; ++j) insert(x[j], j, k, filled, values, indices);
  for (; j + kBlock <= V; j += kBlock) {
    if (block_max_key(x + j) <= order_key(values[k - 1])) continue;
    for (int64_t i = j; i < j + kBlock; ++i)
      if (x[i] > values[k - 1]) insert(x[i], i, k, filled, values, indices);
  }
  for (; j < V; ++j)
    if (x[j] > values[k - 1]) insert(x[j], j, k, filled, values, indices);
}

// exp(x) for x <= 0 (or NaN): Cody-Waite reduction x = n ln 2 + r, |r| <=
// ln 2 / 2, and e^r by its Taylor polynomial of degree 6 (relative error
// below 3e-7 over [-87, 0]). Arguments below -87 count as -87 (e^-87 ~ 2e-38:
// nothing beside a row's maximum, e^0 = 1). Branch-free, so that the loop
// calling it vectorises: the clamp is on the bits, as a float comparison
// keeps GCC from vectorising (floating-point traps).
inline float exp_nonpositive(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0x7fffffff;                            // |x|
  bits = bits < 0x42ae0000 ? bits : 0x42ae0000;  // min(|x|, 87.0f)
  bits |= static_cast<int32_t>(0x80000000u);     // -min(|x|, 87)
  std::memcpy(&x, &bits, sizeof bits);
  const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;   // x - n ln 2, in two parts
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t two_to_n = (static_cast<int32_t>(n) + 127) << 23;  // 2^n as float bits
  float scale;
  std::memcpy(&scale, &two_to_n, sizeof scale);
  return p * scale;
}

// Σ_j exp(x[j] - max) over a row x [V] whose largest entry is max; with AVX2
// and FMA where the CPU has them (a clone per target, chosen at load time).
CLONED_FOR_AVX2
float sum_exp(const float* x, int64_t V, float max) {
  constexpr int kLanes = 16;  // partial sums: the additions vectorise in this order
  float partial[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= V; j += kLanes)
    for (int l = 0; l < kLanes; ++l) partial[l] += exp_nonpositive(x[j + l] - max);
  float sum = 0;
  for (; j < V; ++j) sum += exp_nonpositive(x[j] - max);
  for (float p : partial) sum += p;
  return sum;
}

// LibTorch's float32 CPU tensors of x [N, V] and of (values, indices) [N, k].
struct Rows {
  torch::Tensor x, values, indices;
  Rows(const torch::Tensor& in, int64_t k)
      : x(in.to(torch::kFloat32).contiguous()),
        values(torch::empty({x.size(0), k}, torch::kFloat32)),
        indices(torch::empty({x.size(0), k}, torch::kLong)) {}
};

void check_shape(const torch::Tensor& x, int64_t k) {
  TORCH_CHECK(x.dim() == 2 && k >= 1 && k <= x.size(1), "top_k: x [N, V] and 1 <= k <= V, got ",
              x.sizes(), " and k = ", k);
}

}  // namespace

std::tuple<torch::Tensor, torch::Tensor> top_k_log_probs(const torch::Tensor& logits, int64_t k) {
  check_shape(logits, k);
  if (!logits.is_cpu()) {
    auto [values, indices] = torch::log_softmax(logits, -1, torch::kFloat32).topk(k, 1);
    return {values, indices};
  }
  Rows rows(logits, k);
  const int64_t n = rows.x.size(0), V = rows.x.size(1);
  const float* in = rows.x.data_ptr<float>();
  float* value = rows.values.data_ptr<float>();
  int64_t* index = rows.indices.data_ptr<int64_t>();
  for (int64_t r = 0; r < n; ++r) {
    top_k_of_row(in + r * V, V, k, value + r * k, index + r * k);
    const float max = value[r * k];  // the row's largest logit
    const float log_sum = std::log(sum_exp(in + r * V, V, max));
    for (int64_t i = 0; i < k; ++i) value[r * k + i] = (value[r * k + i] - max) - log_sum;
  }
  return {rows.values, rows.indices};
}

std::tuple<torch::Tensor, torch::Tensor> top_k(const torch::Tensor& x, int64_t k) {
  check_shape(x, k);
  if (!x.is_cpu()) {
    auto [values, indices] = x.topk(k, 1);
    return {values, indices};
  }
  Rows rows(x, k);
  const int64_t n = rows.x.size(0), V = rows.x.size(1);
  // One thread: the scan is bound by memory (the logits just written), and
  // two threads took as long.
  for (int64_t r = 0; r < n; ++r)
    top_k_of_row(rows.x.data_ptr<float>() + r * V, V, k, rows.values.data_ptr<float>() + r * k,
                 rows.indices.data_ptr<int64_t>() + r * k);
  return {rows.values, rows.indices};
}

}  // namespace eval
