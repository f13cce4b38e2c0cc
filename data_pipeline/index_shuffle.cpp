#include "data_pipeline/index_shuffle.h"

#include <stdexcept>
#include <string>

#include "data_pipeline/random.h"

namespace data {

IndexShuffle::IndexShuffle(uint64_t n, uint64_t seed) : n_(n), half_bits_(1) {
  if (n == 0) throw std::invalid_argument("a shuffle needs at least one position");
  while (half_bits_ < 32 && (uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  Rng rng(seed);
  for (auto& key : keys_) key = rng.below(~uint64_t{0});
}

uint64_t IndexShuffle::feistel(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (const uint64_t key : keys_) {
    const uint64_t mixed = left ^ (mix_seed(key, right) & half_mask_);
    left = right;
    right = mixed;
  }
  return (left << half_bits_) | right;
}

uint64_t IndexShuffle::operator()(uint64_t position) const {
  if (position >= n_)
    throw std::out_of_range("position " + std::to_string(position) + " outside a shuffle of " +
                            std::to_string(n_));
  uint64_t x = feistel(position);
  while (x >= n_) x = feistel(x);  // cycle walking: x's cycle returns below n at `position` latest
  return x;
}

}  // namespace data
