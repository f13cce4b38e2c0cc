// Dropout's draws on the CPU: whether element i of a tensor is kept is a
// hash of (seed, i) — a counter-based generator — so that any range of
// elements is drawn on its own (by any thread, in any order, with no
// generator state) and one seed gives one mask on every machine. Torch-free:
// plain loops over plain arrays that vectorise (dropout.h draws the seed).
#pragma once
#include <cstdint>

namespace model {

// The draw of element i: 32 bits, uniform over [0, 2^32) and independent
// across elements and seeds as far as dropout can tell (dropout's test).
uint32_t dropout_draw(uint64_t seed, int64_t i);

// Elements [begin, end) of a mask into out[0, end - begin): `kept` where
// dropout_draw(seed, i) >= drop_below (probability 1 - drop_below / 2^32),
// else 0. The 16-bit form takes the bits of a bfloat16 or half `kept`.
void dropout_mask(float* out, int64_t begin, int64_t end, uint64_t seed, uint32_t drop_below,
                  float kept);
void dropout_mask(uint16_t* out, int64_t begin, int64_t end, uint64_t seed, uint32_t drop_below,
                  uint16_t kept);

}  // namespace model
