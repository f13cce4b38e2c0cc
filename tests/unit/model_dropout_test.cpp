// Dropout on the CPU (model/dropout.h): the share kept and the scale of what
// is kept, against the binomial distribution's own bounds; draws independent
// of their neighbours and of the seed before; the same mask from the same
// torch::manual_seed whatever the threads; the gradient the mask's; the
// identity in evaluation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "trainer/model/dropout.h"
#include "trainer/model/dropout_mask.h"

namespace {

// |observed - n q| within 6 standard deviations of a binomial(n, q) count:
// a sound generator passes each such check with probability 1 - 2e-9 (the
// seeds here are fixed: it passes every run, and a broken one fails every run).
void expect_binomial(double observed, double n, double q, const char* what) {
  const double sd = std::sqrt(n * q * (1 - q));
  EXPECT_LT(std::abs(observed - n * q), 6 * sd)
      << what << ": " << observed << " of " << n << ", expected " << n * q;
}

TEST(Dropout, KeepsOneMinusPAndScalesWhatItKeeps) {
  const int64_t n = 1 << 20;
  for (const double p : {0.1, 0.5}) {
    for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf}) {
      const auto mask = model::dropout_mask({n}, dtype, p, 12345).to(torch::kDouble);
      const auto kept = mask.ne(0);
      expect_binomial(kept.sum().item<double>(), n, 1 - p, "elements kept");
      // What is kept is 1 / (1 - p) rounded once to the dtype (LibTorch 2.x's
      // divide; 1.13's, dividing by 1 - p rounded first, can differ by an ulp).
      const double scale = torch::tensor(1.0 / (1.0 - p)).to(dtype).item<double>();
      EXPECT_TRUE(torch::all(mask.masked_select(kept).eq(scale)).item<bool>()) << p;
    }
  }
}

// Pairs of draws that should be independent: neighbours, elements 2^32
// apart (the index's two halves), and the same element under seeds 7 and 8
// (the seeds come from mt19937, but a hash must not need them far apart).
TEST(Dropout, DrawsAreIndependent) {
  const double p = 0.5;
  const uint32_t below = 1u << 31;
  const int64_t n = 1 << 20;
  const auto keep = [&](uint64_t seed, int64_t i) { return model::dropout_draw(seed, i) >= below; };
  double neighbours = 0, halves = 0, seeds = 0;
  for (int64_t i = 0; i < n; ++i) {
    neighbours += keep(7, i) && keep(7, i + 1);
    halves += keep(7, i) && keep(7, i + (int64_t{1} << 32));
    seeds += keep(7, i) && keep(8, i);
  }
  expect_binomial(neighbours, n, (1 - p) * (1 - p), "neighbours both kept");
  expect_binomial(halves, n, (1 - p) * (1 - p), "elements 2^32 apart both kept");
  expect_binomial(seeds, n, (1 - p) * (1 - p), "an element kept under seeds 7 and 8");
  // Each of the draw's 32 bits is 1 half the time.
  for (int bit = 0; bit < 32; ++bit) {
    double ones = 0;
    for (int64_t i = 0; i < n; ++i) ones += (model::dropout_draw(99, i) >> bit) & 1u;
    expect_binomial(ones, n, 0.5, "a bit of the draw set");
  }
}

// The mask of a range equals that range of the whole mask: threads that
// split the elements any way draw the same.
TEST(Dropout, ARangeDrawsWhatTheWholeDraws) {
  const int64_t n = 100003;
  std::vector<float> whole(n), parts(n);
  model::dropout_mask(whole.data(), 0, n, 5, 1u << 30, 2.0f);
  model::dropout_mask(parts.data(), 0, 777, 5, 1u << 30, 2.0f);
  model::dropout_mask(parts.data() + 777, 777, n, 5, 1u << 30, 2.0f);
  EXPECT_EQ(whole, parts);
}

TEST(Dropout, ManualSeedFixesTheMaskWhateverTheThreads) {
  model::Dropout dropout(0.1);
  const auto x = torch::ones({1024, 1024});  // 32 pieces of 2^15 elements
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(3);
  const auto first = dropout(x), second = dropout(x);
  EXPECT_FALSE(torch::equal(first, second));  // the generator moved on
  at::set_num_threads(3);
  torch::manual_seed(3);
  EXPECT_TRUE(torch::equal(dropout(x), first));
  at::set_num_threads(threads);
  torch::manual_seed(4);
  EXPECT_FALSE(torch::equal(dropout(x), first));
}

// Backward multiplies by the same mask: d(sum(w * dropout(x)))/dx = w * mask.
TEST(Dropout, GradientIsTheMasks) {
  model::Dropout dropout(0.3);
  const auto x = torch::randn({8, 300}).requires_grad_();
  const auto w = torch::randn({8, 300});
  const auto y = dropout(x);
  (w * y).sum().backward();
  const auto mask = y.detach() / x.detach();
  EXPECT_TRUE(torch::allclose(x.grad(), w * mask, 1e-6, 1e-6));
  EXPECT_TRUE(torch::all(mask.eq(0) | (mask - 1 / 0.7).abs().lt(1e-5)).item<bool>());
}

TEST(Dropout, IdentityInEvaluationAndAtZero) {
  const auto x = torch::randn({4, 50});
  model::Dropout dropout(0.5);
  dropout->eval();
  EXPECT_TRUE(torch::equal(dropout(x), x));
  EXPECT_TRUE(torch::equal(model::Dropout(0.0)(x), x));
  EXPECT_THROW(model::Dropout(1.0), c10::Error);
}

}  // namespace
