// Gradient collectives' bandwidth on the MPI backend, in one run: bare
// MPI_Allreduce against the communicator's allreduce (blocking, and
// non-blocking + wait), and the sharded update's pair, reduce-scatter +
// allgather (blocking, and non-blocking + wait; the reduce-scatter is the
// project's own ring, against MPI's own non-blocking pair beside it), of the
// same bytes.
//
//   scripts/mpirun.sh -np 2 --bind-to core build/bench/allreduce_bench
//
// Prints, per message size, the bus bandwidth (2 (n-1)/n × bytes / time, the
// figure NCCL's tests report, for the pair as for one allreduce: they move the
// same bytes): the median of 5 rounds, the variants interleaved within each
// round so that machine noise hits them alike.
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <vector>

#include <torch/torch.h>

#include "launch/process.h"
#include "tests/bench/bench_stats.h"
#include "trainer/distributed/mpi_communicator.h"

namespace {

// Seconds per call of `op`, the slowest rank's, over enough calls for ~0.1 s.
template <typename Op>
double seconds_per_call(Op op) {
  for (int i = 0; i < 3; ++i) op();
  int calls = 1;
  for (;;) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) op();
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (elapsed > 0.1 || calls >= (1 << 16)) return elapsed / calls;
    calls *= 4;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const launch::ProcessInfo& info = launch::Process::init(argc, argv).info();
  torch::set_num_threads(1);
  distributed::MpiCommunicator comm;
  const double bus = info.world_size > 1 ? 2.0 * (info.world_size - 1) / info.world_size : 1.0;
  if (info.rank == 0) {
    std::printf("# gradient collectives of float32, %d ranks (bus GB/s)\n", info.world_size);
    std::printf(
        "| bytes | bare MPI_Allreduce | allreduce_sum | iallreduce_sum + wait "
        "| reduce_scatter_sum + allgather_in_place | both non-blocking + wait "
        "| MPI_Ireduce_scatter_block + MPI_Iallgather + wait | allreduce_sum / bare "
        "|\n|---|---|---|---|---|---|---|---|\n");
  }
  for (int64_t bytes : {4096L, 65536L, 1L << 20, 8L << 20, 25L << 20, 100L << 20}) {
    torch::Tensor t = torch::ones({bytes / 4});
    torch::Tensor shard = torch::empty({bytes / 4 / info.world_size});
    std::array<std::vector<double>, 6> rounds;
    for (int round = 0; round < 5; ++round) {
      rounds[0].push_back(seconds_per_call([&] {
        MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), static_cast<int>(t.numel()), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      }));
      rounds[1].push_back(seconds_per_call([&] { comm.allreduce_sum(t); }));
      rounds[2].push_back(seconds_per_call([&] { comm.iallreduce_sum(t)->wait(); }));
      rounds[3].push_back(seconds_per_call([&] {
        comm.reduce_scatter_sum(t, shard);
        comm.allgather_in_place(t);
      }));
      rounds[4].push_back(seconds_per_call([&] {
        comm.ireduce_scatter_sum(t, shard)->wait();
        comm.iallgather_in_place(t)->wait();
      }));
      rounds[5].push_back(seconds_per_call([&] {
        const int n = static_cast<int>(shard.numel());
        MPI_Request request;
        MPI_Ireduce_scatter_block(t.data_ptr(), shard.data_ptr(), n, MPI_FLOAT, MPI_SUM,
                                  MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        MPI_Iallgather(MPI_IN_PLACE, n, MPI_FLOAT, t.data_ptr(), n, MPI_FLOAT, MPI_COMM_WORLD,
                       &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      }));
    }
    const auto gbs = [&](double s) { return bus * bytes / s / 1e9; };
    if (info.rank == 0)
      std::printf("| %ld | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                  static_cast<long>(bytes), gbs(bench::median(rounds[0])),
                  gbs(bench::median(rounds[1])), gbs(bench::median(rounds[2])),
                  gbs(bench::median(rounds[3])), gbs(bench::median(rounds[4])),
                  gbs(bench::median(rounds[5])),
                  bench::median(rounds[0]) / bench::median(rounds[1]));
  }
  return 0;
}
