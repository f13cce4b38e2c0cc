// The order of collectives and of the gradient sum, across real MPI ranks
// (ctest runs this program under mpirun with 3 ranks): collectives issued off
// the main thread, as autograd's device thread issues them for CUDA tensors,
// reach MPI in issue order; and the sum is added in the ring's order on every
// path, whatever the node layout.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <thread>

#include "tests/mpi/linear_problem.h"
#include "tests/mpi/mpi_test_ranks.h"
#include "trainer/distributed/grad_sync.h"

namespace {

// Collectives started off the main thread (MPI_THREAD_FUNNELED) are queued
// and started by the main thread's next call, in the order they were queued:
// rank 0 queues two from another thread and then issues a third on the main
// thread, while the other ranks issue all three on the main thread. Started
// in another order, the three (of different sizes) would not match. A
// blocking collective off the main thread is refused.
TEST(MpiCommunicator, CollectivesStartedOffTheMainThreadRunInOrder) {
  torch::Tensor a = torch::full({100}, rank() + 1.0), b = torch::full({7}, 2.0 * (rank() + 1));
  torch::Tensor c = torch::full({3}, 1.0);
  std::unique_ptr<distributed::Work> first, second;
  if (rank() == 0) {
    std::string refused;
    std::thread([&] {
      first = comm().iallreduce_sum(a);
      second = comm().iallreduce_sum(b);
      EXPECT_FALSE(first->test());  // not started: nothing to test off the main thread
      try {
        comm().barrier();
      } catch (const std::logic_error& e) {
        refused = e.what();
      }
    }).join();
    EXPECT_NE(refused.find("off the main thread"), std::string::npos) << refused;
  } else {
    first = comm().iallreduce_sum(a);
    second = comm().iallreduce_sum(b);
  }
  comm().allreduce_sum(c);  // on rank 0, the queued two start first
  second->wait();
  first->wait();
  EXPECT_TRUE(torch::equal(a, torch::full({100}, rank_sum())));
  EXPECT_TRUE(torch::equal(b, torch::full({7}, 2.0 * rank_sum())));
  EXPECT_TRUE(torch::equal(c, torch::full({3}, static_cast<double>(world()))));
}

// Autograd runs CUDA tensors' gradient hooks on its own device thread, not on
// the thread that called backward: here backward runs on another thread, so
// the hooks that start buckets do too, and their collectives are queued. The
// ranks differ in what backward starts: rank 0's last micro-batch leaves out
// parameter 2, so its buckets from 2's on start only from synchronize() (after
// the queued ones), and the last rank's last micro-batch is empty, so all of
// its buckets start from synchronize(). The sums are exact.
TEST(GradSync, BucketsStartedByHooksOffTheMainThread) {
  LinearProblem problem;
  distributed::GradSync sync(problem.params, comm(), options(32, true));
  const int empty_rank = world() - 1;
  const size_t left_out = 2;  // by rank 0's last micro-batch
  const auto used_by = [&](int r, int micro) {
    std::vector<size_t> used;
    for (size_t i : problem.all())
      if (!(r == 0 && micro == 1 && i == left_out)) used.push_back(i);
    return used;
  };
  const auto backward_on_another_thread = [&](int micro) {
    std::string error;
    std::thread([&] {
      try {
        problem.backward(micro, used_by(rank(), micro));
      } catch (const std::exception& e) {
        error = e.what();
      }
    }).join();
    EXPECT_EQ(error, "");
  };
  sync.zero_grad();
  sync.prepare(false);
  backward_on_another_thread(0);
  sync.prepare(true);
  if (rank() != empty_rank) backward_on_another_thread(1);
  sync.synchronize();
  if (rank() == 0) {
    EXPECT_GT(sync.stats().started_in_backward, 0);
  }
  for (size_t i = 0; i < problem.params.size(); ++i) {
    torch::Tensor expected = torch::zeros_like(problem.params[i]);
    for (int r = 0; r < world(); ++r) {
      expected += problem.coefficient(i, r, 0);
      if (r != empty_rank && !(r == 0 && i == left_out)) expected += problem.coefficient(i, r, 1);
    }
    EXPECT_TRUE(torch::equal(problem.params[i].grad(), expected)) << "param " << i;
  }
}

// The order of the sum, whatever the node layout: the MPI reduce-scatter (the
// ranks on other nodes) and the node-shared sum (all on one node) both add
// shard c as (((x[c+1] + x[c+2]) + ... ) + x[c]). Values of mixed magnitudes
// make float addition's order visible: the reference, added in that order by
// hand, differs from the sum in rank order in some elements of rank 0's shard
// (asserted, so that the comparison could fail), and both paths equal it bitwise.
TEST(GradSync, SumOrderIsTheRingsOnEveryPath) {
  const int64_t per_rank = 16 * 64;  // one bucket: a parameter of per_rank * world elements
  const auto gradient_of = [&](int r) {
    torch::manual_seed(100 + r);
    return torch::randn({per_rank * world()}) *
           torch::pow(10.0, torch::randint(-6, 7, {per_rank * world()}).to(torch::kFloat));
  };
  std::vector<torch::Tensor> x;
  for (int r = 0; r < world(); ++r) x.push_back(gradient_of(r));
  const int64_t begin = rank() * per_rank;
  const auto mine = [&](int r) { return x[(r + world()) % world()].narrow(0, begin, per_rank); };
  torch::Tensor ring_order = mine(rank() + 1).clone();
  for (int k = 2; k <= world(); ++k) ring_order += mine(rank() + k);
  torch::Tensor rank_order = mine(0).clone();
  for (int r = 1; r < world(); ++r) rank_order += mine(r);
  if (world() > 2 && rank() == 0) {  // (on the last rank the two orders coincide)
    EXPECT_FALSE(torch::equal(ring_order, rank_order)) << "the values do not show the order";
  }

  for (bool node_shared : {false, true}) {
    torch::Tensor param = torch::zeros({per_rank * world()}, torch::requires_grad());
    auto o = options(1 << 20, true);
    o.shard = true;
    o.node_shared = node_shared;
    distributed::GradSync sync({param}, comm(), o);
    ASSERT_EQ(sync.node_shared(), node_shared);
    sync.zero_grad();
    sync.prepare(true);
    (param * x[rank()]).sum().backward();
    sync.synchronize();
    EXPECT_TRUE(torch::equal(sync.shard_parameters()[0].grad(), ring_order))
        << "node_shared " << node_shared;
  }
}

}  // namespace
