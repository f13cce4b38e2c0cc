// Label smoothing and learning-rate schedules against values computed by hand
// here and against LibTorch's own kl_div.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "trainer/task/label_smoothing.h"
#include "trainer/train/lr_schedule.h"

namespace {

// Vocabulary of 4 (pad = 0), eps = 0.1: q = [0, 0.05, 0.9, 0.05] for y = 2.
TEST(LabelSmoothing, FourClassCaseByHand) {
  const auto p = torch::tensor({{0.1, 0.2, 0.3, 0.4}}, torch::kDouble);
  const auto target = torch::tensor({2}, torch::kLong);
  const auto sums = task::LabelSmoothingLoss(4, 0, 0.1)(p.log(), target);
  const double expected =
      0.9 * std::log(0.9 / 0.3) + 0.05 * std::log(0.05 / 0.2) + 0.05 * std::log(0.05 / 0.4);
  EXPECT_NEAR(sums.smoothed.item<double>(), expected, 1e-12);
  EXPECT_NEAR(sums.nll.item<double>(), -std::log(0.3), 1e-12);
  EXPECT_EQ(sums.tokens.item<int64_t>(), 1);
}

TEST(LabelSmoothing, PaddingPositionsAreIgnored) {
  const auto lp = torch::randn({3, 5}, torch::kDouble).log_softmax(1);
  const auto with_pad = task::LabelSmoothingLoss(5, 0, 0.1)(lp, torch::tensor({3, 0, 4}));
  const auto without =
      task::LabelSmoothingLoss(5, 0, 0.1)(lp.index({torch::tensor({0, 2})}), torch::tensor({3, 4}));
  EXPECT_NEAR(with_pad.smoothed.item<double>(), without.smoothed.item<double>(), 1e-12);
  EXPECT_EQ(with_pad.tokens.item<int64_t>(), 2);
}

// The Annotated Transformer's dense formulation: build q, then KLDivLoss(sum).
TEST(LabelSmoothing, EqualsDenseKlDivOfLibTorch) {
  const int64_t V = 11, pad = 0;
  const double eps = 0.1;
  torch::manual_seed(0);
  const auto logits = torch::randn({2, 6, V}, torch::kDouble).requires_grad_();
  auto target = torch::randint(1, V, {2, 6}, torch::kLong);
  target.index_put_({1, torch::indexing::Slice(4)}, pad);

  auto q = torch::full({12, V}, eps / (V - 2), torch::kDouble);
  q.scatter_(1, target.reshape({-1, 1}), 1 - eps);
  q.select(1, pad).zero_();
  q.index_put_({target.reshape({-1}).eq(pad)}, 0);
  const auto lp = logits.log_softmax(-1);
  const auto dense = torch::nn::functional::kl_div(
      lp.reshape({-1, V}), q, torch::nn::functional::KLDivFuncOptions().reduction(torch::kSum));

  const auto ours = task::LabelSmoothingLoss(V, pad, eps)(logits, target);  // log-softmax fused in
  EXPECT_NEAR(ours.smoothed.item<double>(), dense.item<double>(), 1e-10);

  const auto weight = torch::full({}, 2.5, torch::kDouble);  // the gradient coming in
  const auto g_ours = torch::autograd::grad({ours.smoothed}, {logits}, {weight}, true)[0];
  const auto g_dense = torch::autograd::grad({dense}, {logits}, {weight})[0];
  EXPECT_TRUE(torch::allclose(g_ours, g_dense, 1e-10, 1e-12));
}

// bfloat16 logits (autocast): float32 sums, and a bfloat16 gradient close to
// the float32 computation's.
TEST(LabelSmoothing, BFloat16LogitsGiveFloat32Loss) {
  torch::manual_seed(1);
  const auto logits = torch::randn({8, 50});
  const auto target = torch::randint(1, 50, {8}, torch::kLong);
  const task::LabelSmoothingLoss loss(50, 0, 0.1);
  const auto half = logits.to(torch::kBFloat16).requires_grad_();
  const auto full = half.detach().to(torch::kFloat).requires_grad_();
  const auto a = loss(half, target), b = loss(full, target);
  EXPECT_EQ(a.smoothed.scalar_type(), torch::kFloat);
  EXPECT_NEAR(a.smoothed.item<double>(), b.smoothed.item<double>(), 1e-4);
  a.smoothed.backward();
  b.smoothed.backward();
  EXPECT_EQ(half.grad().scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(half.grad().to(torch::kFloat), full.grad(), 1e-2, 1e-3));
}

// Without smoothing: LibTorch's negative log-likelihood, value and gradient
// (padding ignored: its ignore_index).
TEST(LabelSmoothing, ZeroSmoothingIsNll) {
  const auto logits = torch::randn({5, 7}, torch::kDouble).requires_grad_();
  const auto target = torch::tensor({1, 2, 0, 6, 3});
  const auto sums = task::LabelSmoothingLoss(7, 0, 0.0)(logits, target);
  const auto nll = torch::nll_loss(logits.log_softmax(1), target, {}, at::Reduction::Sum, 0);
  EXPECT_NEAR(sums.smoothed.item<double>(), nll.item<double>(), 1e-12);
  EXPECT_NEAR(sums.nll.item<double>(), nll.item<double>(), 1e-12);
  const auto g_ours = torch::autograd::grad({sums.smoothed}, {logits})[0];
  const auto g_nll = torch::autograd::grad({nll}, {logits})[0];
  EXPECT_TRUE(torch::allclose(g_ours, g_nll, 1e-10, 1e-12));
}

// noam, d_model 512, warmup 4000, factor 1: the paper's schedule.
TEST(LrSchedule, NoamAtStepOneWarmupAndTenWarmup) {
  const train::LrSchedule noam(config::Schedule::kNoam, 1.0, 4000, 512);
  const double scale = 1.0 / std::sqrt(512.0);
  EXPECT_DOUBLE_EQ(noam.at(1), scale * 1.0 / std::pow(4000.0, 1.5));
  EXPECT_DOUBLE_EQ(noam.at(4000), scale / std::sqrt(4000.0));  // the peak, ~7.0e-4
  EXPECT_NEAR(noam.at(4000), 6.987712429686844e-04, 1e-15);
  EXPECT_DOUBLE_EQ(noam.at(40000), scale / std::sqrt(40000.0));
  EXPECT_LT(noam.at(3999), noam.at(4000));
  EXPECT_LT(noam.at(4001), noam.at(4000));
}

TEST(LrSchedule, InverseSqrtAndConstant) {
  const train::LrSchedule inv(config::Schedule::kInverseSqrt, 5e-4, 4000, 512);
  EXPECT_DOUBLE_EQ(inv.at(1), 5e-4 / 4000);
  EXPECT_DOUBLE_EQ(inv.at(4000), 5e-4);
  EXPECT_DOUBLE_EQ(inv.at(40000), 5e-4 * std::sqrt(0.1));
  const train::LrSchedule flat(config::Schedule::kConstant, 3e-4, 0, 512);
  EXPECT_DOUBLE_EQ(flat.at(1), 3e-4);
  EXPECT_DOUBLE_EQ(flat.at(40000), 3e-4);
  const train::LrSchedule warm(config::Schedule::kConstant, 3e-4, 10, 512);
  EXPECT_DOUBLE_EQ(warm.at(5), 1.5e-4);
  EXPECT_DOUBLE_EQ(warm.at(40), 3e-4);
}

TEST(LrSchedule, RejectsNoWarmupAndStepZero) {
  EXPECT_THROW(train::LrSchedule(config::Schedule::kInverseSqrt, 1.0, 0, 512),
               std::invalid_argument);
  EXPECT_THROW(train::LrSchedule(config::Schedule::kNoam, 1.0, 10, 512).at(0),
               std::invalid_argument);
}

}  // namespace
