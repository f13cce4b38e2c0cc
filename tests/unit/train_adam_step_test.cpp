// AdamStep: the same mathematics as LibTorch's torch::optim::Adam (the
// reference) on gradients times a factor, in each of its three ways (its
// one-pass CPU loop, ATen's fused kernel where LibTorch has one for the CPU,
// the scaled torch::optim::Adam); it keeps its moments in the optimizer's own
// state, so either can continue what the other started (a checkpoint of an
// older run); a step it is told to skip changes nothing, its count included.
#include <gtest/gtest.h>

#include <vector>

#include <torch/version.h>

#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/train/adam_step.h"

namespace {

using torch::optim::Adam;
using torch::optim::AdamOptions;
using torch::optim::AdamParamState;
using train::AdamKernel;

// LibTorch 2.4 added a CPU kernel for the fused Adam (torch.optim.Adam(fused=True)).
constexpr bool kCpuFusedAdam =
    TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4);

// Shapes with odd sizes, and one larger than a parallel chunk.
std::vector<torch::Tensor> make_params(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> params;
  for (auto shape : std::vector<std::vector<int64_t>>{{7}, {13, 5}, {300, 257}})
    params.push_back(torch::randn(shape).requires_grad_());
  return params;
}

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

AdamOptions options(double weight_decay = 0) {
  return AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-9).weight_decay(weight_decay);
}

// Step n's gradients (before the factor) and factor.
std::vector<torch::Tensor> gradients(const std::vector<torch::Tensor>& params, int n) {
  torch::manual_seed(100 + n);
  std::vector<torch::Tensor> g;
  for (const auto& p : params) g.push_back(torch::randn_like(p) * 50);
  return g;
}
double factor(int n) { return 1.0 / (30 + n); }
double lr(int n) { return 1e-2 * (n + 1); }

// The reference step: gradients scaled, then torch::optim::Adam.
void reference_step(Adam& adam, std::vector<torch::Tensor>& params, int n) {
  const auto g = gradients(params, n);
  for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = g[i] * factor(n);
  static_cast<AdamOptions&>(adam.param_groups()[0].options()).lr(lr(n));
  adam.step();
}

torch::Tensor factor_tensor(double f) { return torch::full({}, f, torch::kDouble); }
torch::Tensor skip_tensor(bool skip) { return torch::full({}, skip, torch::kBool); }

void our_step(train::AdamStep& step, std::vector<torch::Tensor>& params, int n, bool skip = false) {
  const auto g = gradients(params, n);
  for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = g[i].clone();
  step(lr(n), factor_tensor(factor(n)), skip_tensor(skip));
  step.write_step_counts();  // the fused way's counts, for the comparisons
}

// Equal up to float rounding, relative to the tensor's scale: LibTorch's
// kernels fuse some multiply-adds that the loop rounds twice, and moments that
// nearly cancel make element-wise relative errors meaningless.
bool close(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() <= 1e-6 * b.abs().max().item<double>();
}

void expect_same(Adam& ours, const std::vector<torch::Tensor>& our_params, Adam& reference,
                 const std::vector<torch::Tensor>& reference_params) {
  for (size_t i = 0; i < our_params.size(); ++i) {
    EXPECT_TRUE(close(our_params[i], reference_params[i])) << "param " << i;
    const auto& a =
        static_cast<AdamParamState&>(*ours.state().at(checkpoint::adam_state_key(our_params[i])));
    const auto& b = static_cast<AdamParamState&>(
        *reference.state().at(checkpoint::adam_state_key(reference_params[i])));
    EXPECT_EQ(a.step(), b.step());
    EXPECT_TRUE(close(a.exp_avg(), b.exp_avg())) << "exp_avg " << i;
    EXPECT_TRUE(close(a.exp_avg_sq(), b.exp_avg_sq())) << "exp_avg_sq " << i;
    ASSERT_EQ(a.max_exp_avg_sq().defined(), b.max_exp_avg_sq().defined());
    if (b.max_exp_avg_sq().defined()) {
      EXPECT_TRUE(close(a.max_exp_avg_sq(), b.max_exp_avg_sq())) << "max_exp_avg_sq " << i;
    }
  }
}

TEST(AdamStep, OnePassLoopEqualsTorchAdamOnScaledGradients) {
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    auto ours = make_params(1), theirs = clones(ours);
    Adam our_adam(ours, options()), their_adam(theirs, options());
    train::AdamStep step(our_adam);
    EXPECT_EQ(train::adam_kernel(our_adam), AdamKernel::kOnePassLoop);
    for (int n = 0; n < 6; ++n) {
      our_step(step, ours, n);
      reference_step(their_adam, theirs, n);
    }
    expect_same(our_adam, ours, their_adam, theirs);
    // and the parameters moved: a step that did nothing would fail above only by chance
    EXPECT_FALSE(torch::allclose(ours[2], make_params(1)[2], 1e-3, 1e-3));
  }
}

// The loop's at::parallel_for runs OpenMP's team of LibTorch's thread count:
// its file is built with OpenMP (one thread whatever the count otherwise), and
// against LibTorch's own runtime (another runtime's team would keep its own
// default, every core, whatever set_num_threads said).
TEST(AdamStep, OnePassLoopRunsOverLibTorchsThreads) {
  const int before = at::get_num_threads();
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    EXPECT_EQ(train::one_pass_loop_threads(), threads);
  }
  at::set_num_threads(before);
}

// Weight decay and AMSGrad are not in the loop: ATen's fused kernel takes
// them where LibTorch has one for the CPU, else the scaled torch::optim::Adam.
TEST(AdamStep, WeightDecayAndAmsgradEqualTorchAdam) {
  for (bool amsgrad : {false, true}) {
    auto ours = make_params(2), theirs = clones(ours);
    Adam our_adam(ours, options(0.1).amsgrad(amsgrad)),
        their_adam(theirs, options(0.1).amsgrad(amsgrad));
    train::AdamStep step(our_adam);
    EXPECT_EQ(train::adam_kernel(our_adam),
              kCpuFusedAdam ? AdamKernel::kFused : AdamKernel::kTorchAdam);
    for (int n = 0; n < 4; ++n) {
      our_step(step, ours, n);
      reference_step(their_adam, theirs, n);
    }
    expect_same(our_adam, ours, their_adam, theirs);
  }
}

// One kernel cannot take float32 and float64 tensors together.
TEST(AdamStep, MixedDtypesStepWithTorchAdam) {
  auto ours = make_params(5);
  ours[1] = ours[1].detach().to(torch::kDouble).requires_grad_();
  auto theirs = clones(ours);
  Adam our_adam(ours, options()), their_adam(theirs, options());
  train::AdamStep step(our_adam);
  EXPECT_EQ(train::adam_kernel(our_adam), AdamKernel::kTorchAdam);
  for (int n = 0; n < 3; ++n) {
    our_step(step, ours, n);
    reference_step(their_adam, theirs, n);
  }
  expect_same(our_adam, ours, their_adam, theirs);
}

TEST(AdamStep, ContinuesTorchAdamsStateAndTheOtherWayRound) {
  auto a = make_params(3), b = clones(a);
  Adam adam_a(a, options()), adam_b(b, options());
  // a: torch's Adam, then ours; b: ours, then torch's.
  for (int n = 0; n < 3; ++n) reference_step(adam_a, a, n);
  train::AdamStep step_a(adam_a), step_b(adam_b);  // step_a from torch's state
  for (int n = 3; n < 6; ++n) our_step(step_a, a, n);
  for (int n = 0; n < 3; ++n) our_step(step_b, b, n);
  for (int n = 3; n < 6; ++n) reference_step(adam_b, b, n);
  expect_same(adam_a, a, adam_b, b);
}

TEST(AdamStep, SkipsParametersWithoutGradient) {
  auto params = make_params(4);
  const torch::Tensor before = params[0].detach().clone();
  Adam adam(params, options());
  const auto g = gradients(params, 0);
  for (size_t i = 1; i < params.size(); ++i) params[i].mutable_grad() = g[i];
  train::AdamStep step(adam);
  step(1e-2, factor_tensor(1.0), skip_tensor(false));
  EXPECT_TRUE(torch::equal(params[0], before));
  EXPECT_EQ(adam.state().count(checkpoint::adam_state_key(params[0])), 0u);
  EXPECT_EQ(adam.state().count(checkpoint::adam_state_key(params[1])), 1u);
}

// A skipped step (a non-finite one, decided on the device) leaves parameters,
// moments and step counts as they were: the run goes on as torch's Adam that
// never saw it. Every way: float32 (the loop), weight decay (the fused kernel
// where LibTorch has one for the CPU), mixed dtypes (torch::optim::Adam).
TEST(AdamStep, ASkippedStepChangesNothing) {
  for (int way = 0; way < 3; ++way) {
    auto ours = make_params(6);
    if (way == 2) ours[1] = ours[1].detach().to(torch::kDouble).requires_grad_();
    auto theirs = clones(ours);
    const AdamOptions o = options(way == 1 ? 0.1 : 0.0);
    Adam our_adam(ours, o), their_adam(theirs, o);
    train::AdamStep step(our_adam);
    our_step(step, ours, 0);
    reference_step(their_adam, theirs, 0);
    const auto before = clones(ours);
    our_step(step, ours, 1, /*skip=*/true);
    for (size_t i = 0; i < ours.size(); ++i)
      EXPECT_TRUE(torch::equal(ours[i], before[i])) << "way " << way << ", param " << i;
    expect_same(our_adam, ours, their_adam, theirs);
    for (int n = 2; n < 4; ++n) {
      our_step(step, ours, n);
      reference_step(their_adam, theirs, n);
    }
    expect_same(our_adam, ours, their_adam, theirs);
  }
}

}  // namespace
