// first_diverged (train/diverged_weights.h): the first parameter holding a
// non-finite value or one beyond kDivergedWeight, by name, with its max |w|;
// nothing for sane weights, however many.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "trainer/train/diverged_weights.h"

namespace {

torch::nn::Sequential three_layers() {
  torch::manual_seed(0);
  return torch::nn::Sequential(torch::nn::Linear(4, 4), torch::nn::Linear(4, 4),
                               torch::nn::Linear(4, 2));
}

void set(torch::nn::Sequential& net, const std::string& name, int64_t at, double value) {
  torch::NoGradGuard no_grad;
  net->named_parameters()[name].view({-1})[at] = value;
}

TEST(DivergedWeights, SaneWeightsPass) {
  auto net = three_layers();
  EXPECT_FALSE(train::first_diverged(*net).has_value());
  set(net, "1.weight", 3, -0.99 * train::kDivergedWeight);  // large, but within the bound
  EXPECT_FALSE(train::first_diverged(*net).has_value());
}

TEST(DivergedWeights, TheFirstExplodedOrNonFiniteParameterIsNamed) {
  auto net = three_layers();
  set(net, "2.bias", 1, -3.5e26);
  set(net, "1.weight", 5, std::numeric_limits<double>::quiet_NaN());
  const auto first = train::first_diverged(*net);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->name, "1.weight");  // registration order: layer 1 before layer 2
  EXPECT_TRUE(std::isnan(first->largest));
  set(net, "1.weight", 5, 0.5);
  const auto next = train::first_diverged(*net);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->name, "2.bias");
  EXPECT_FLOAT_EQ(next->largest, 3.5e26);  // max |w|, read back from a float32 parameter
  set(net, "2.bias", 1, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(train::first_diverged(*net)->largest));
}

}  // namespace
