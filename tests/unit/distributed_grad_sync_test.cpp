// GradSync's gradient hooks poll collectives in flight only where the
// communicator needs it: MPI (progress inside MPI calls only) is polled while
// backward computes; NCCL (progress on the GPU and its proxy thread) is not,
// since the hooks run once per parameter on the thread that drives backward.
// One rank's communicator that counts its works' test() calls stands in for
// both; the synchronised gradients are the local ones either way.
#include <gtest/gtest.h>

#include "tests/unit/one_rank_communicator.h"
#include "trainer/distributed/grad_sync.h"

namespace {

class CountingRank : public test_util::OneRankCommunicator {
 public:
  struct CountedWork : distributed::Work {
    int* tests;
    explicit CountedWork(int* t) : tests(t) {}
    bool test() override { return ++*tests, true; }
    void wait() override {}
  };
  explicit CountingRank(bool polls) : polls_(polls) {}
  int tests = 0;
  bool needs_progress_polls() const override { return polls_; }

 protected:
  std::unique_ptr<distributed::Work> make_work() override {
    return std::make_unique<CountedWork>(&tests);
  }

 private:
  bool polls_;
};

// A step of three stacked linear layers (six parameters, buckets of one
// parameter each, so that several are in flight while backward goes on):
// the test() calls made, and whether every gradient equals autograd's own.
int polls_in_one_step(bool communicator_needs_polls) {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(8, 8), torch::nn::Linear(8, 8),
                            torch::nn::Linear(8, 4));
  const auto x = torch::randn({5, 8});
  net->forward(x).square().sum().backward();
  std::vector<torch::Tensor> expected;
  for (const auto& p : net->parameters()) expected.push_back(p.grad().clone());

  CountingRank comm(communicator_needs_polls);
  distributed::GradSync sync(net->parameters(), comm, {/*bucket_bytes=*/1, /*overlap=*/true});
  sync.zero_grad();
  sync.prepare(/*last=*/true);
  net->forward(x).square().sum().backward();
  const int during_backward = comm.tests;
  sync.synchronize();
  const auto params = net->parameters();
  for (size_t k = 0; k < params.size(); ++k)
    EXPECT_TRUE(torch::equal(params[k].grad(), expected[k])) << "parameter " << k;
  return during_backward;
}

TEST(GradSync, HooksPollOnlyCommunicatorsThatNeedIt) {
  EXPECT_EQ(polls_in_one_step(/*communicator_needs_polls=*/false), 0);
  // Each hook polls every bucket started so far (how many, autograd's order decides).
  EXPECT_GT(polls_in_one_step(/*communicator_needs_polls=*/true), 0);
}

}  // namespace
