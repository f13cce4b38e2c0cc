#include "trainer/task/smoothed_kl_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace task::kernels {

namespace {

constexpr int kThreads = 256;  // a row's block: 8 warps
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Rounded to nearest even, as ATen's casts.
template <typename T>
__device__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// VEC consecutive elements, read or written as one access (16 bytes for VEC > 1).
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
  T v[VEC];
};

// exp(a - m) for m >= a; 0 for a = -inf (also when m is -inf: no inf - inf).
__device__ __forceinline__ float exp_below(float a, float m) {
  return a == -INFINITY ? 0.f : expf(a - m);
}

// A row's running statistics: max m, s = sum exp(x - m), t = sum x.
struct RowStats {
  float m, s, t;
};

__device__ __forceinline__ RowStats merge(RowStats a, RowStats b) {
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * exp_below(a.m, m) + b.s * exp_below(b.m, m), a.t + b.t};
}

__device__ __forceinline__ RowStats warp_reduce(RowStats x) {
  for (int offset = 16; offset > 0; offset /= 2)
    x = merge(x,
              {__shfl_xor_sync(0xffffffffu, x.m, offset), __shfl_xor_sync(0xffffffffu, x.s, offset),
               __shfl_xor_sync(0xffffffffu, x.t, offset)});
  return x;
}

// The block's statistics, whole in thread 0; a fixed order (no atomics):
// the same logits give the same bits.
__device__ RowStats block_reduce(RowStats x) {
  __shared__ RowStats warps[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  x = warp_reduce(x);
  if (lane == 0) warps[warp] = x;
  __syncthreads();
  if (warp != 0) return x;
  return warp_reduce(lane < kWarps ? warps[lane] : RowStats{-INFINITY, 0.f, 0.f});
}

template <typename T, int VEC>
__global__ void __launch_bounds__(kThreads)
    rows_kernel(const T* logits, int64_t vocab, const int64_t* target, const bool* keep,
                int64_t pad, float c, float o, double entropy, float* smoothed, float* nll,
                float* lse) {
  const int64_t row = blockIdx.x;
  if (!keep[row]) {  // padding: nothing to read
    if (threadIdx.x == 0) smoothed[row] = nll[row] = lse[row] = 0.f;
    return;
  }
  const T* x = logits + row * vocab;
  RowStats stats{-INFINITY, 0.f, 0.f};
  for (int64_t i = int64_t(threadIdx.x) * VEC; i < vocab; i += int64_t(kThreads) * VEC) {
    const Pack<T, VEC> pack = *reinterpret_cast<const Pack<T, VEC>*>(x + i);
    float v[VEC], m = stats.m;
#pragma unroll
    for (int j = 0; j < VEC; ++j) m = fmaxf(m, v[j] = to_float(pack.v[j]));
    float s = stats.s * exp_below(stats.m, m), t = stats.t;
#pragma unroll
    for (int j = 0; j < VEC; ++j) s += exp_below(v[j], m), t += v[j];
    stats = {m, s, t};
  }
  stats = block_reduce(stats);
  if (threadIdx.x != 0) return;
  const float row_lse = stats.m + logf(stats.s);
  lse[row] = row_lse;
  const int64_t y = target[row];
  if (y < 0 || y >= vocab) {
    smoothed[row] = nll[row] = NAN;
    return;
  }
  // log p_y, log p_pad, sum_v log p_v = sum_v x_v - V lse (in double: V lse
  // is ~10^5 where the sum's float rounding would show)
  const double lp_y = double(to_float(x[y])) - row_lse;
  const double lp_pad = double(to_float(x[pad])) - row_lse;
  const double sum_lp = double(stats.t) - double(vocab) * row_lse;
  double kl = entropy - double(c) * lp_y;
  if (o > 0) kl -= double(o) * (sum_lp - lp_y - lp_pad);
  smoothed[row] = float(kl);
  nll[row] = float(-lp_y);
}

template <typename T, int VEC>
__global__ void __launch_bounds__(kThreads)
    grad_kernel(const T* logits, int64_t vocab, const int64_t* target, const bool* keep,
                int64_t pad, float c, float o, const float* lse, const float* grad_out, T* grad) {
  const int64_t row = blockIdx.x;
  const T* x = logits + row * vocab;
  T* g = grad + row * vocab;
  const bool kept = keep[row];
  const float w = kept ? *grad_out : 0.f, row_lse = kept ? lse[row] : 0.f;
  const int64_t y = target[row];
  for (int64_t i = int64_t(threadIdx.x) * VEC; i < vocab; i += int64_t(kThreads) * VEC) {
    Pack<T, VEC> out;
    if (kept) {
      const Pack<T, VEC> in = *reinterpret_cast<const Pack<T, VEC>*>(x + i);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const int64_t v = i + j;
        const float q = v == y ? c : (v == pad ? 0.f : o);  // the smoothed target
        out.v[j] = from_float<T>((expf(to_float(in.v[j]) - row_lse) - q) * w);
      }
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(0.f);
    }
    *reinterpret_cast<Pack<T, VEC>*>(g + i) = out;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T>
cudaError_t launch_rows(const SmoothedKlShape& s, double entropy, float* smoothed, float* nll,
                        float* lse, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const T* x = static_cast<const T*>(s.logits);
  const auto grid = static_cast<unsigned>(s.rows);
  if (s.vocab % kVec == 0 && aligned16(x))
    rows_kernel<T, kVec><<<grid, kThreads, 0, stream>>>(x, s.vocab, s.target, s.keep, s.pad,
                                                        s.confidence, s.off_value, entropy,
                                                        smoothed, nll, lse);
  else
    rows_kernel<T, 1><<<grid, kThreads, 0, stream>>>(x, s.vocab, s.target, s.keep, s.pad,
                                                     s.confidence, s.off_value, entropy, smoothed,
                                                     nll, lse);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_grad(const SmoothedKlShape& s, const float* lse, const float* grad_out,
                        void* grad, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const T* x = static_cast<const T*>(s.logits);
  T* g = static_cast<T*>(grad);
  const auto grid = static_cast<unsigned>(s.rows);
  if (s.vocab % kVec == 0 && aligned16(x) && aligned16(g))
    grad_kernel<T, kVec><<<grid, kThreads, 0, stream>>>(
        x, s.vocab, s.target, s.keep, s.pad, s.confidence, s.off_value, lse, grad_out, g);
  else
    grad_kernel<T, 1><<<grid, kThreads, 0, stream>>>(x, s.vocab, s.target, s.keep, s.pad,
                                                     s.confidence, s.off_value, lse, grad_out, g);
  return cudaGetLastError();
}

}  // namespace

cudaError_t smoothed_kl_rows(const SmoothedKlShape& shape, double entropy, float* smoothed,
                             float* nll, float* lse, cudaStream_t stream) {
  if (shape.rows == 0) return cudaSuccess;  // a grid of 0 blocks is an invalid launch
  switch (shape.type) {
    case LogitType::kFloat: return launch_rows<float>(shape, entropy, smoothed, nll, lse, stream);
    case LogitType::kHalf: return launch_rows<__half>(shape, entropy, smoothed, nll, lse, stream);
    case LogitType::kBFloat16:
      return launch_rows<__nv_bfloat16>(shape, entropy, smoothed, nll, lse, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t smoothed_kl_grad(const SmoothedKlShape& shape, const float* lse, const float* grad_out,
                             void* grad, cudaStream_t stream) {
  if (shape.rows == 0) return cudaSuccess;
  switch (shape.type) {
    case LogitType::kFloat: return launch_grad<float>(shape, lse, grad_out, grad, stream);
    case LogitType::kHalf: return launch_grad<__half>(shape, lse, grad_out, grad, stream);
    case LogitType::kBFloat16:
      return launch_grad<__nv_bfloat16>(shape, lse, grad_out, grad, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace task::kernels
