// The loss's own CUDA kernels against the CPU's ATen composite: a program of
// its own, skipped as a whole without a GPU (scripts/gpu_check.sh's stage 2
// runs it first on one).
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "build_options.h"
#include "trainer/task/label_smoothing.h"
#if TRAINER_WITH_CUDA
#include "trainer/task/smoothed_kl_cuda.h"
#endif

namespace {

// On a GPU, the loss's own CUDA kernels (task/smoothed_kl_kernels.h)
// against the ATen composite on the CPU, in float32 from the same values:
// float32, bfloat16 and float16 logits; a vocabulary read 16 bytes at a time
// (32 000) and one that is not (1 001), and 32 000 starting 2 bytes off 16
// (read an element at a time); padding rows; an incoming gradient of 2.5. The
// gradient is rounded to the logits' dtype, hence its tolerance. Two runs
// give the same bits (no atomics in the kernels).
TEST(LabelSmoothing, CudaKernelsEqualTheCpuComposite) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
#if TRAINER_WITH_CUDA
  torch::manual_seed(2);
  const int64_t pad = 0;
  for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf}) {
    for (const auto& [V, offset] : {std::pair<int64_t, int64_t>{32000, 0}, {1001, 0}, {32000, 1}}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + ", V " + std::to_string(V) + ", offset " +
                   std::to_string(offset));
      const auto values = (4 * torch::randn({96, V})).to(dtype).to(torch::kFloat);
      auto target = torch::randint(1, V, {96}, torch::kLong);
      target.slice(0, 0, 9).fill_(pad);
      const task::LabelSmoothingLoss loss(V, pad, 0.1);
      const auto weight = torch::full({}, 2.5);

      const auto cpu = values.clone().requires_grad_();
      const auto expected = loss(cpu, target);
      const auto expected_grad = torch::autograd::grad({expected.smoothed}, {cpu}, {weight})[0];

      const auto run = [&] {
        // A view `offset` elements into its storage: aligned to 16 bytes or not.
        const auto storage =
            torch::empty({values.numel() + offset}, torch::dtype(dtype).device(torch::kCUDA));
        const auto gpu = storage.narrow(0, offset, values.numel())
                             .view_as(values)
                             .copy_(values)
                             .detach()
                             .requires_grad_();
        EXPECT_TRUE(task::cuda::takes(gpu));  // the kernels, not ATen on the GPU
        const auto sums = loss(gpu, target.to(torch::kCUDA));
        const auto grad =
            torch::autograd::grad({sums.smoothed}, {gpu}, {weight.to(torch::kCUDA)})[0];
        EXPECT_EQ(grad.scalar_type(), dtype);
        return std::vector<torch::Tensor>{sums.smoothed.cpu(), sums.nll.cpu(), grad.cpu()};
      };
      const auto first = run(), second = run();
      EXPECT_NEAR(first[0].item<double>(), expected.smoothed.item<double>(),
                  1e-5 * expected.smoothed.item<double>());
      EXPECT_NEAR(first[1].item<double>(), expected.nll.item<double>(),
                  1e-5 * expected.nll.item<double>());
      const double rtol = dtype == torch::kFloat ? 1e-5 : (dtype == torch::kHalf ? 1e-3 : 8e-3);
      EXPECT_TRUE(torch::allclose(first[2].to(torch::kFloat), expected_grad, rtol, 1e-6))
          << (first[2].to(torch::kFloat) - expected_grad).abs().max().item<double>();
      for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(torch::equal(first[i], second[i]));
    }
  }
#else
  FAIL() << "a CUDA device, and a build without CUDA";
#endif
}

}  // namespace
