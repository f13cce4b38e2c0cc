#include "trainer/model/dropout_mask.h"

#include "base/cpu_clones.h"

namespace model {
namespace {

// A bijection of 32 bits whose output bits each flip with probability about
// 1/2 when any input bit flips (C. Wellons's "lowbias32", found by search).
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// The seed's two 32-bit keys, its bits spread by SplitMix64's finaliser
// (seeds a step apart give unrelated keys).
struct Keys {
  uint32_t low, high;
};
inline Keys keys_of(uint64_t seed) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return {static_cast<uint32_t>(z), static_cast<uint32_t>(z >> 32)};
}

// Two rounds, the index's low half under the first key, its high half with
// the second: every bit of (seed, i) reaches every bit of the draw.
inline uint32_t draw(Keys k, int64_t i) {
  const auto u = static_cast<uint64_t>(i);
  return mix32(mix32(static_cast<uint32_t>(u) ^ k.low) ^ (static_cast<uint32_t>(u >> 32) + k.high));
}

template <typename T>
inline void fill(T* out, int64_t begin, int64_t end, uint64_t seed, uint32_t drop_below, T kept) {
  const Keys k = keys_of(seed);
  for (int64_t i = begin; i < end; ++i) out[i - begin] = draw(k, i) >= drop_below ? kept : T(0);
}

}  // namespace

uint32_t dropout_draw(uint64_t seed, int64_t i) { return draw(keys_of(seed), i); }

CLONED_FOR_AVX2
void dropout_mask(float* out, int64_t begin, int64_t end, uint64_t seed, uint32_t drop_below,
                  float kept) {
  fill(out, begin, end, seed, drop_below, kept);
}

CLONED_FOR_AVX2
void dropout_mask(uint16_t* out, int64_t begin, int64_t end, uint64_t seed, uint32_t drop_below,
                  uint16_t kept) {
  fill(out, begin, end, seed, drop_below, kept);
}

}  // namespace model
