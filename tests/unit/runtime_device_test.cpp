// The device choice (runtime/device.h) on the layouts a cluster produces: no
// binding, one GPU per task, --gpu-bind=closest on two sockets, per-task
// device cgroups, more ranks than GPUs, mixed and overlapping nodes, several
// nodes; then the overrides and the log's layout lines. GPUs are named by
// made-up UUIDs; what each rank sees is what CUDA would show it.
#include <gtest/gtest.h>

#include "tests/unit/error_message.h"
#include "trainer/runtime/device.h"

namespace {

using runtime::RankView;

// Rank views of one node, `gpus[r]` the UUIDs rank r sees, in its CUDA order.
std::vector<RankView> node(const std::string& name,
                           const std::vector<std::vector<std::string>>& gpus) {
  std::vector<RankView> views;
  for (const auto& g : gpus) views.push_back(RankView{name, 8, g});
  return views;
}

using choices::Backend;
using choices::Device;

std::vector<runtime::DeviceChoice> choose(const std::vector<RankView>& views,
                                          Backend backend = Backend::kAuto) {
  return runtime::choose_devices({Device::kAuto, backend, /*nccl_built=*/true}, views);
}

torch::Device cuda(int index) {
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

const std::vector<std::string> kFour = {"GPU-a", "GPU-b", "GPU-c", "GPU-d"};

TEST(ChooseDevices, CpuWithoutGpus) {
  for (const auto& c : choose(node("cpu-node", {{}, {}}))) {
    EXPECT_TRUE(c.device.is_cpu());
    EXPECT_EQ(c.backend, Backend::kMpi);
    EXPECT_EQ(c.gpu, "");
  }
}

TEST(ChooseDevices, NoBindingEveryRankSeesEveryGpu) {
  const auto c = choose(node("n", {kFour, kFour, kFour, kFour}));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(c[r].device, cuda(r));
    EXPECT_EQ(c[r].gpu, kFour[r]);
    EXPECT_EQ(c[r].backend, Backend::kNccl);
    EXPECT_TRUE(c[r].shares.empty());
  }
  // More GPUs than ranks: the first ones.
  EXPECT_EQ(choose(node("n", {kFour, kFour}))[1].device, cuda(1));
}

// srun --gpus-per-task=1, or per-task device cgroups: every rank sees one GPU,
// which it calls 0, and each is another GPU. (Comparing CUDA_VISIBLE_DEVICES
// strings took cgroup-bound ranks, all seeing "0", for ranks sharing one GPU.)
TEST(ChooseDevices, OneGpuPerTaskAllCalledZero) {
  const auto c = choose(node("n", {{"GPU-a"}, {"GPU-b"}, {"GPU-c"}, {"GPU-d"}}));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(c[r].device, cuda(0));
    EXPECT_EQ(c[r].gpu, kFour[r]);
  }
  // Two GPUs per task: the first of its own.
  const auto two = choose(node("n", {{"GPU-a", "GPU-b"}, {"GPU-c", "GPU-d"}}));
  EXPECT_EQ(two[1].device, cuda(0));
  EXPECT_EQ(two[1].gpu, "GPU-c");
}

// srun --gpu-bind=closest on a two-socket node: ranks 0, 1 see the first
// socket's GPUs, ranks 2, 3 the second's. Each socket's ranks split its GPUs
// (taking the first GPU of each set put two ranks on GPU a and two on c).
TEST(ChooseDevices, GpuBindClosestOnTwoSockets) {
  const std::vector<std::string> socket0 = {"GPU-a", "GPU-b"}, socket1 = {"GPU-c", "GPU-d"};
  const auto c = choose(node("n", {socket0, socket0, socket1, socket1}));
  EXPECT_EQ(c[0].device, cuda(0));
  EXPECT_EQ(c[1].device, cuda(1));
  EXPECT_EQ(c[2].device, cuda(0));
  EXPECT_EQ(c[3].device, cuda(1));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(c[r].gpu, kFour[r]);
}

// The same set in another order (CUDA_VISIBLE_DEVICES=1,0 for one rank): the
// split follows the first rank's order, and each rank finds its GPU in its own.
TEST(ChooseDevices, SameSetInAnotherOrder) {
  const auto c = choose(node("n", {{"GPU-a", "GPU-b"}, {"GPU-b", "GPU-a"}}));
  EXPECT_EQ(c[0].gpu, "GPU-a");
  EXPECT_EQ(c[1].gpu, "GPU-b");
  EXPECT_EQ(c[1].device, cuda(0));
}

TEST(ChooseDevices, MoreRanksThanGpusIsAnErrorWithNccl) {
  const std::string why = test_util::error_of([] {
    choose(node("gpu-node-7", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}}));
  });
  test_util::expect_mentions(
      why, {"gpu-node-7", "ranks 0,1,2", "2 GPU(s)", "NCCL", "--gpus-per-task=1"});
}

TEST(ChooseDevices, MpiSharesGpusRoundRobinAndSaysSo) {
  const auto c = choose(node("n", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}}),
                        Backend::kMpi);
  EXPECT_EQ(c[0].gpu, "GPU-a");
  EXPECT_EQ(c[1].gpu, "GPU-b");
  EXPECT_EQ(c[2].gpu, "GPU-a");
  EXPECT_EQ(c[2].device, cuda(0));
  EXPECT_EQ(c[0].shares, std::vector<int>{2});
  EXPECT_EQ(c[2].shares, std::vector<int>{0});
  EXPECT_TRUE(c[1].shares.empty());
  for (const auto& choice : c) EXPECT_EQ(choice.backend, Backend::kMpi);
}

// A mixed node: two ranks share a set, two have their own. Then sets that
// overlap: two NCCL ranks would land on one GPU, refused, naming both.
TEST(ChooseDevices, MixedAndOverlappingNodes) {
  const auto c = choose(node("n", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}, {"GPU-c"}, {"GPU-d"}}));
  for (int r = 0; r < 4; ++r) EXPECT_EQ(c[r].gpu, kFour[r]);
  EXPECT_EQ(c[2].device, cuda(0));

  const auto overlapping = node("gpu-node-3", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}, {"GPU-a"}});
  test_util::expect_mentions(test_util::error_of([&] { choose(overlapping); }),
                             {"gpu-node-3", "ranks 0,2", "GPU-a", "NCCL needs one GPU per rank"});
  const auto shared = choose(overlapping, Backend::kMpi);
  EXPECT_EQ(shared[0].shares, std::vector<int>{2});
}

TEST(ChooseDevices, EachNodeSplitsItsOwnGpus) {
  auto views = node("node-a", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}});
  for (const auto& v : node("node-b", {{"GPU-c", "GPU-d"}, {"GPU-c", "GPU-d"}})) views.push_back(v);
  const auto c = choose(views);
  EXPECT_EQ(c[2].device, cuda(0));
  EXPECT_EQ(c[3].device, cuda(1));
  EXPECT_EQ(c[3].gpu, "GPU-d");
}

TEST(ChooseDevices, WithoutNcclBuiltGpusUseMpi) {
  const auto c = runtime::choose_devices({Device::kAuto, Backend::kAuto, /*nccl_built=*/false},
                                         node("n", {{"GPU-a"}}));
  EXPECT_EQ(c[0].backend, Backend::kMpi);
  EXPECT_EQ(c[0].device, cuda(0));
}

TEST(ChooseDevices, EveryRankOnTheSameKindOfDevice) {
  auto views = node("gpu-node", {{"GPU-a"}});
  views.push_back(RankView{"cpu-node", 8, {}});
  test_util::expect_mentions(
      test_util::error_of([&] { choose(views); }),
      {"rank 1 on node cpu-node sees no GPU", "rank 0 on node gpu-node", "train.device = \"cpu\""});
}

TEST(ChooseDevices, Overrides) {
  const auto cpu =
      runtime::choose_devices({Device::kCpu, Backend::kAuto, true}, node("n", {kFour, kFour}));
  EXPECT_TRUE(cpu[1].device.is_cpu());
  EXPECT_EQ(cpu[1].backend, Backend::kMpi);

  test_util::expect_mentions(
      test_util::error_of([] {
        runtime::choose_devices({Device::kCuda, Backend::kAuto, true}, node("gpu-node-7", {{}}));
      }),
      {"train.device = cuda", "rank 0 on node gpu-node-7 sees no GPU"});
  test_util::expect_mentions(
      test_util::error_of([] {
        runtime::choose_devices({Device::kAuto, Backend::kNccl, true}, node("n", {{}}));
      }),
      {"dist.backend = nccl needs a CUDA device"});
}

TEST(DescribeLayout, OneLinePerNodeWithRanksThreadsAndGpus) {
  auto views = node("node-a", {{"GPU-a", "GPU-b"}, {"GPU-a", "GPU-b"}});
  for (const auto& v : node("node-b", {{"GPU-c"}})) views.push_back(v);
  const auto lines = runtime::describe_layout(views, choose(views));
  ASSERT_EQ(lines.size(), 2u);
  test_util::expect_mentions(lines[0], {"node node-a", "rank(s) 0,1", "local 0-1", "8 thread(s)",
                                        "rank 1: 8 thread(s), cuda:1 GPU-b"});
  test_util::expect_mentions(lines[1],
                             {"node node-b", "rank(s) 2", "rank 2: 8 thread(s), cuda:0 GPU-c"});

  const auto cpu = runtime::describe_layout(node("c", {{}, {}}), choose(node("c", {{}, {}})));
  test_util::expect_mentions(cpu[0], {"node c", "rank 1: 8 thread(s), cpu"});
}

}  // namespace
