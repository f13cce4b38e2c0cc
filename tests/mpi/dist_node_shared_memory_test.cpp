// The node-shared memory object (trainer/distributed/node_shared_memory.h)
// across real MPI ranks on this machine (ctest runs this program under
// mpirun with 3 ranks).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "tests/mpi/mpi_test_ranks.h"
#include "trainer/distributed/mpi_communicator.h"
#include "trainer/distributed/node_shared_memory.h"

namespace {

// Objects of ours in /dev/shm (glibc's shm_open puts them there).
int64_t shared_objects() {
  int64_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    n += entry.path().filename().string().rfind("transformer-grads-", 0) == 0;
  return n;
}

// One object every rank maps: each rank's writes are every rank's after a
// barrier; a size /dev/shm cannot hold is refused on every rank alike; neither
// leaves a name behind.
TEST(NodeSharedMemory, EveryRankSeesEveryRanksWrites) {
  const int64_t objects_before = shared_objects();
  comm().barrier();  // every rank has counted
  const auto shared = distributed::node_shared_memory(comm(), 16 * world());
  ASSERT_TRUE(shared.has_value());
  EXPECT_TRUE(torch::equal(*shared, torch::zeros({16 * world()})));  // zero-filled
  comm().barrier();  // every rank has looked before any writes
  shared->narrow(0, 16 * rank(), 16).fill_(rank() + 1.0);
  comm().barrier();
  const auto expected = torch::arange(1, world() + 1, torch::kFloat).repeat_interleave(16);
  EXPECT_TRUE(torch::equal(*shared, expected));
  EXPECT_FALSE(distributed::node_shared_memory(comm(), int64_t{1} << 50).has_value());  // 4 PiB
  comm().barrier();  // rank 0 has unlinked
  EXPECT_EQ(shared_objects(), objects_before);
}

}  // namespace
