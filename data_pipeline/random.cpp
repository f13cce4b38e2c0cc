#include "data_pipeline/random.h"

namespace data {

namespace {

// splitmix64 finaliser (Steele, Lea, Flood 2014).
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t stream) { return splitmix64(splitmix64(seed) ^ stream); }

uint64_t Rng::below(uint64_t n) {
  // Reject the lowest 2^64 mod n raw values so that every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  uint64_t r = engine_();
  while (r < threshold) r = engine_();
  return r % n;
}

}  // namespace data
