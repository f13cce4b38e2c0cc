// A random permutation of [0, n), evaluated one position at a time in O(1)
// memory, so that an epoch's order over a corpus of any size costs nothing
// to hold:
//
//   IndexShuffle order(n, seed);
//   order(k);   // the example at position k of the shuffled order; a bijection on [0, n)
//
// A balanced Feistel network on the smallest 2^(2h) >= n (h >= 1), whose
// round functions are splitmix64 of the half and a key drawn from `seed`, is
// a permutation of [0, 2^(2h)); cycle walking (Black and Rogaway 2002)
// restricts it to [0, n): apply it again until the value falls below n. As
// 2^(2h) < 4n, that takes fewer than four applications on average. Four
// rounds suffice for large halves (Luby and Rackoff); small domains need
// more — with six, the first two positions of a 5-element order are
// visibly non-uniform over seeds (chi-square 189 on 19 degrees of
// freedom), with twelve they are not (22) — so twelve, ~50 ns a round trip.
#pragma once
#include <array>
#include <cstdint>

namespace data {

class IndexShuffle {
 public:
  IndexShuffle(uint64_t n, uint64_t seed);  // n >= 1
  uint64_t operator()(uint64_t position) const;

 private:
  uint64_t feistel(uint64_t x) const;  // the permutation of [0, 2^(2h))

  static constexpr int kRounds = 12;
  uint64_t n_;
  int half_bits_;
  uint64_t half_mask_;
  std::array<uint64_t, kRounds> keys_;
};

}  // namespace data
