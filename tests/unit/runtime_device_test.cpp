// The device choice (runtime/device.h), case by case as the rules read: the
// scheduler's binding styles, counts that cannot work with NCCL, overrides.
#include <gtest/gtest.h>

#include "tests/unit/error_message.h"
#include "trainer/runtime/device.h"

namespace {

runtime::DeviceRequest node(int local_rank, int local_size, int visible_gpus) {
  runtime::DeviceRequest r;
  r.node = "gpu-node-7";
  r.local_rank = local_rank;
  r.local_size = local_size;
  r.visible_gpus = visible_gpus;
  r.nccl_built = true;
  return r;
}

TEST(ChooseDevice, CpuWithoutGpus) {
  const auto c = runtime::choose_device(node(1, 2, 0));
  EXPECT_TRUE(c.device.is_cpu());
  EXPECT_EQ(c.backend, "mpi");
}

TEST(ChooseDevice, OneGpuPerLocalRankWhenAllRanksSeeAll) {
  for (int rank = 0; rank < 4; ++rank) {
    const auto c = runtime::choose_device(node(rank, 4, 4));
    EXPECT_EQ(c.device, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank)));
    EXPECT_EQ(c.backend, "nccl");
  }
  // More GPUs than ranks: the first ones.
  EXPECT_EQ(runtime::choose_device(node(1, 2, 8)).device, torch::Device(torch::kCUDA, 1));
}

TEST(ChooseDevice, SchedulerBoundOneGpuPerRank) {
  // Slurm --gpus-per-task=1 / --gpu-bind: each rank sees one GPU, a different one.
  for (int rank = 0; rank < 4; ++rank) {
    auto r = node(rank, 4, 1);
    r.node_shares_gpus = false;
    const auto c = runtime::choose_device(r);
    EXPECT_EQ(c.device, torch::Device(torch::kCUDA, 0)) << rank;
    EXPECT_EQ(c.backend, "nccl");
  }
  // Bound to two GPUs each: the first of its own.
  auto r = node(3, 4, 2);
  r.node_shares_gpus = false;
  EXPECT_EQ(runtime::choose_device(r).device, torch::Device(torch::kCUDA, 0));
}

TEST(ChooseDevice, MoreRanksThanGpusIsAnErrorWithNccl) {
  const std::string why = test_util::error_of([] { runtime::choose_device(node(0, 2, 1)); });
  test_util::expect_mentions(why, {"gpu-node-7", "2 rank(s)", "1 visible GPU(s)", "NCCL"});
  auto explicit_nccl = node(2, 3, 2);
  explicit_nccl.backend = "nccl";
  EXPECT_THROW(runtime::choose_device(explicit_nccl), std::invalid_argument);
}

TEST(ChooseDevice, MpiSharesGpusRoundRobin) {
  for (int rank = 0; rank < 3; ++rank) {
    auto r = node(rank, 3, 2);
    r.backend = "mpi";
    const auto c = runtime::choose_device(r);
    EXPECT_EQ(c.device, torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank % 2)));
    EXPECT_EQ(c.backend, "mpi");
  }
}

TEST(ChooseDevice, WithoutNcclBuiltGpusUseMpi) {
  auto r = node(0, 1, 1);
  r.nccl_built = false;
  EXPECT_EQ(runtime::choose_device(r).backend, "mpi");
}

TEST(ChooseDevice, Overrides) {
  auto cpu = node(0, 2, 2);
  cpu.device = "cpu";
  EXPECT_TRUE(runtime::choose_device(cpu).device.is_cpu());
  EXPECT_EQ(runtime::choose_device(cpu).backend, "mpi");

  auto cuda = node(0, 2, 0);
  cuda.device = "cuda";
  test_util::expect_mentions(test_util::error_of([&] { runtime::choose_device(cuda); }),
                             {"train.device = cuda", "gpu-node-7", "0 visible GPU(s)"});

  auto nccl_on_cpu = node(0, 1, 0);
  nccl_on_cpu.backend = "nccl";
  test_util::expect_mentions(test_util::error_of([&] { runtime::choose_device(nccl_on_cpu); }),
                             {"dist.backend = nccl needs a CUDA device"});
}

}  // namespace
