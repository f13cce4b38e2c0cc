// train.precision and train.tf32 (runtime/precision.h): the names, autocast
// to the right dtype for bf16 and fp16 (read back from LibTorch's own
// autocast state), and TF32 switched in LibTorch's global context.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tests/unit/error_message.h"
#include "trainer/runtime/precision.h"

namespace {

TEST(Precision, NamesAndAClearErrorForOthers) {
  EXPECT_EQ(runtime::parse_precision("fp32"), choices::Precision::kFp32);
  EXPECT_EQ(runtime::parse_precision("bf16"), choices::Precision::kBf16);
  EXPECT_EQ(runtime::parse_precision("fp16"), choices::Precision::kFp16);
  test_util::expect_mentions(test_util::error_of([] { runtime::parse_precision("fp8"); }),
                             {"fp8", "fp32, bf16 or fp16"});
}

// auto on a CPU: bf16 exactly when the kernel lists a bfloat16 instruction
// set among the CPU's flags (the whole /proc/cpuinfo searched here, not
// parsed line by line as the trainer does); the explicit settings as given,
// bf16 with a warning where the CPU would emulate it.
TEST(Precision, AutoOnACpuFollowsItsBfloat16Instructions) {
  std::ostringstream cpuinfo;
  cpuinfo << std::ifstream("/proc/cpuinfo").rdbuf();
  const bool native = std::regex_search(cpuinfo.str(), std::regex(R"(\b(avx512_bf16|amx_bf16)\b)"));
  const torch::Device cpu(torch::kCPU);
  const auto choice = runtime::choose_precision(choices::Precision::kAuto, cpu);
  EXPECT_EQ(choice.precision, native ? choices::Precision::kBf16 : choices::Precision::kFp32);
  EXPECT_NE(choice.reason.find(native ? "has" : "no bfloat16"), std::string::npos) << choice.reason;
  EXPECT_EQ(runtime::choose_precision(choices::Precision::kFp32, cpu).precision,
            choices::Precision::kFp32);
  const auto bf16 = runtime::choose_precision(choices::Precision::kBf16, cpu);
  EXPECT_EQ(bf16.precision, choices::Precision::kBf16);  // as asked, with a warning where emulated
  EXPECT_EQ(bf16.warning.find("oneDNN emulates them") != std::string::npos, !native) << bf16.warning;
  EXPECT_TRUE(runtime::choose_precision(choices::Precision::kFp32, cpu).warning.empty());
  EXPECT_EQ(runtime::precision_name(choices::Precision::kBf16), "bf16");
}

// The CPU's autocast dtype inside a scope, and the state restored after it.
TEST(Precision, AutocastScopeSetsTheDtypeAndRestores) {
  const torch::Device cpu(torch::kCPU);
  const auto x = torch::randn({4, 8});
  const auto w = torch::randn({3, 8});
  {
    runtime::AutocastScope scope(choices::Precision::kBf16, cpu);
    EXPECT_EQ(torch::linear(x, w).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::linear(x, w).scalar_type(), torch::kFloat);
  {
    runtime::AutocastScope scope(choices::Precision::kFp32, cpu);
    EXPECT_EQ(torch::linear(x, w).scalar_type(), torch::kFloat);
  }
}

TEST(Precision, Tf32IsSwitchedInLibTorch) {
  const auto tf32_on = [] {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 10)
    return at::globalContext().float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL) ==
           at::Float32Precision::TF32;
#elif TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 9
    return at::globalContext().float32Precision("cuda", "matmul") == "tf32";
#else
    return at::globalContext().allowTF32CuBLAS();
#endif
  };
  runtime::use_tf32(true);
  EXPECT_TRUE(tf32_on());
  runtime::use_tf32(false);
  EXPECT_FALSE(tf32_on());
}

}  // namespace
