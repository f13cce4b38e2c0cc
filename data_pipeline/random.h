// Portable, seeded randomness for data preparation and batching.
//
// std::mt19937_64 is specified bit for bit by the C++ standard, but
// std::uniform_int_distribution and std::shuffle are not (libstdc++ and
// libc++ give different results), so we draw integers and shuffle ourselves:
// the same seed gives the same data on every platform. Torch's RNG is never
// used here, so model initialisation and data order stay independent.
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace data {

// A well-mixed seed for stream `stream` of `seed` (splitmix64 of both), so
// that e.g. (seed, epoch) pairs give unrelated generators.
uint64_t mix_seed(uint64_t seed, uint64_t stream);

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform integer in [0, n), n > 0, without modulo bias.
  uint64_t below(uint64_t n);

  // Uniform integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  // Fisher-Yates shuffle in place.
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[below(i)]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace data
