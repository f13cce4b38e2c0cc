// LossScaler (train/loss_scaler.h), fp16's dynamic loss scale, against the
// rules of torch.amp.GradScaler: an overflow skips the step and halves the
// scale, growth_interval finite steps in a row double it, a resumed state
// continues; and the scaling is exact: the gradients of scale x loss divided
// by scale are bitwise the unscaled gradients. The scaler decides on the
// device (here the CPU); the tests read its tensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "trainer/train/loss_scaler.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// One step's decision, read back: whether the scaler absorbed (skipped) it.
struct Scaler {
  train::LossScaler scaler;
  bool absorb_overflow(double loss, double grad_norm) {
    const auto f64 = torch::dtype(torch::kDouble);
    const torch::Tensor absorbed =
        scaler.absorb_overflow(torch::full({}, loss, f64), torch::full({}, grad_norm, f64));
    EXPECT_EQ(absorbed.scalar_type(), torch::kBool);
    return absorbed.item<bool>();
  }
  double scale() const { return scaler.scale().item<double>(); }
  checkpoint::LossScaleState state() const { return scaler.state(); }
};

Scaler fp16(int64_t growth_interval, checkpoint::LossScaleState resumed = {}) {
  train::LossScaler::Options o;
  o.enabled = true;
  o.growth_interval = growth_interval;
  return Scaler{train::LossScaler(o, resumed, torch::kCPU)};
}

TEST(LossScaler, DisabledScalesByOneAndNeverSkips) {
  Scaler off{train::LossScaler(train::LossScaler::Options{}, {}, torch::kCPU)};
  EXPECT_EQ(off.scale(), 1.0);
  EXPECT_FALSE(off.absorb_overflow(1.0, kInf));
  EXPECT_EQ(off.scale(), 1.0);
  EXPECT_EQ(off.state().scale, 0);  // nothing for state.json
}

TEST(LossScaler, OverflowSkipsTheStepAndHalvesTheScale) {
  auto s = fp16(2000);
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_TRUE(s.absorb_overflow(2.5, kInf));
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_TRUE(s.absorb_overflow(2.5, kNan));
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_FALSE(s.absorb_overflow(2.5, 3.0));  // a finite step is applied
  EXPECT_EQ(s.scale(), 16384.0);
}

TEST(LossScaler, GrowsAfterGrowthIntervalFiniteStepsInARow) {
  auto s = fp16(3);
  s.absorb_overflow(1.0, 1.0);
  s.absorb_overflow(1.0, 1.0);
  EXPECT_TRUE(s.absorb_overflow(1.0, kInf));  // resets the count
  EXPECT_EQ(s.scale(), 32768.0);
  for (int i = 0; i < 2; ++i) s.absorb_overflow(1.0, 1.0);
  EXPECT_EQ(s.scale(), 32768.0);
  s.absorb_overflow(1.0, 1.0);  // the third in a row
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.state().good_steps, 0);
}

TEST(LossScaler, WhatTheScaleCannotExplainGoesToTheGuard) {
  auto s = fp16(2000, {1.0, 0});
  EXPECT_FALSE(s.absorb_overflow(1.0, kInf));  // overflow at scale 1: not fp16's range
  EXPECT_EQ(s.scale(), 1.0);
  auto t = fp16(2000);
  EXPECT_FALSE(t.absorb_overflow(kNan, kInf));  // the loss itself is not finite
  EXPECT_EQ(t.scale(), 65536.0);
}

TEST(LossScaler, AResumedStateContinues) {
  auto s = fp16(10);
  for (int i = 0; i < 7; ++i) s.absorb_overflow(1.0, 1.0);
  s.absorb_overflow(1.0, kInf);
  for (int i = 0; i < 4; ++i) s.absorb_overflow(1.0, 1.0);
  auto resumed = fp16(10, s.state());
  EXPECT_EQ(resumed.scale(), 32768.0);
  for (int i = 0; i < 5; ++i) resumed.absorb_overflow(1.0, 1.0);
  EXPECT_EQ(resumed.scale(), 32768.0);
  resumed.absorb_overflow(1.0, 1.0);  // the tenth finite step since the overflow
  EXPECT_EQ(resumed.scale(), 65536.0);
}

TEST(LossScaler, ScalingThenUnscalingGivesBitwiseTheSameGradients) {
  torch::manual_seed(3);
  torch::nn::Linear layer(16, 8);
  const auto x = torch::randn({32, 16});
  const auto gradients = [&](double scale) {
    layer->zero_grad();
    (layer(x).tanh().pow(2).sum() * scale).backward();
    return std::vector<torch::Tensor>{layer->weight.grad() / scale, layer->bias.grad() / scale};
  };
  const auto plain = gradients(1.0);
  for (double scale : {65536.0, 1024.0, 0.5}) {
    const auto scaled = gradients(scale);
    for (size_t k = 0; k < plain.size(); ++k) EXPECT_TRUE(torch::equal(plain[k], scaled[k]));
  }
}

}  // namespace
