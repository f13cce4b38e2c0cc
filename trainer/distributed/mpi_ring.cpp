#include "trainer/distributed/mpi_ring.h"

#include <exception>
#include <utility>

namespace distributed::mpi {

namespace {

// Ring reduce-scatter over point-to-point messages (the bandwidth-optimal ring
// of Patarasuk & Yuan, as NCCL runs it), as a Work: in world - 1 steps each
// rank passes a chunk on to the next rank and adds the one it receives into
// its own copy; rank r ends with chunk r summed, in `shard`. (Open MPI 4's
// MPI_Reduce_scatter_block has no ring algorithm, and moves a third of its
// allreduce's bandwidth on large buffers: allreduce_bench.)
//
// Its own ring, not MPI's reduce-scatter, for the order of the sum: chunk c is
// (((x[c+1] + x[c+2]) + x[c+3]) + ... ) + x[c] (ranks mod world), whatever
// the MPI library and whichever nodes the ranks run on, and the node-shared
// sum (grad_sync.cpp) adds in the same order: a run resumed on another node
// layout of the same world size continues bit for bit.
//
// test() moves it on as far as its messages have arrived, wait() to the end
// (it progresses only there: GradSync calls test() at every gradient hook);
// each step's messages carry the collective's own tag, so that the rings of
// several buckets in flight never take each other's messages. Host memory
// only (device tensors are staged).
class RingReduceScatter : public Work {
 public:
  RingReduceScatter(Staged input, Staged result, int rank, int world, int tag)
      : input_(std::move(input)),
        result_(std::move(result)),
        rank_(rank),
        world_(world),
        tag_(tag) {
    n_ = static_cast<int>(result_.host().numel());
    received_ = world_ > 2 ? torch::empty_like(result_.host()) : result_.host();
    post();
  }
  ~RingReduceScatter() override {
    try {
      if (step_ < world_ - 1) wait();  // its messages must not outlive their buffers
    } catch (const std::exception&) {  // a destructor must not throw; MPI errors abort anyway
    }
  }
  bool test() override {
    while (step_ < world_ - 1) {
      if (!on_main_thread()) return false;  // progress is the main thread's
      int done = 0;
      MPI_Testall(2, requests_, &done, MPI_STATUSES_IGNORE);
      if (!done) return false;
      add_received();
    }
    finish();
    return true;
  }
  void wait() override {
    if (step_ < world_ - 1) check_wait_on_main_thread();
    while (step_ < world_ - 1) {
      MPI_Waitall(2, requests_, MPI_STATUSES_IGNORE);
      add_received();
    }
    finish();
  }

 private:
  torch::Tensor chunk(int c) const {
    return input_.host().narrow(0, int64_t{(c % world_ + world_) % world_} * n_, n_);
  }
  bool last() const { return step_ == world_ - 2; }
  // This step's messages: the chunk summed so far to the right, the next from the left.
  void post() {
    const MPI_Datatype type = mpi_type(result_.host());
    const torch::Tensor into = last() ? result_.host() : received_;
    MPI_Irecv(into.data_ptr(), n_, type, (rank_ + world_ - 1) % world_, tag_, MPI_COMM_WORLD,
              &requests_[0]);
    MPI_Isend(chunk(rank_ - step_ - 1).data_ptr(), n_, type, (rank_ + 1) % world_, tag_,
              MPI_COMM_WORLD, &requests_[1]);
  }
  void add_received() {
    if (last())
      result_.host().add_(chunk(rank_));  // the others' sum + this rank's own part
    else
      chunk(rank_ - step_ - 2).add_(received_);  // sent in the next step
    if (++step_ < world_ - 1) post();
  }
  void finish() {
    if (!finished_) result_.finish();
    finished_ = true;
  }

  Staged input_, result_;
  const int rank_, world_, tag_;
  int n_ = 0;
  torch::Tensor received_;
  int step_ = 0;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Work> start_ring_reduce_scatter(Staged input, Staged result, int rank, int world,
                                                int tag) {
  return std::make_unique<RingReduceScatter>(std::move(input), std::move(result), rank, world, tag);
}

// In world - 1 steps each rank passes on the chunk it got last (its own
// first) and receives the next.
void ring_allgather(const torch::Tensor& flat, int rank, int world) {
  const int n = static_cast<int>(flat.numel() / world);
  const MPI_Datatype type = mpi_type(flat);
  const auto chunk = [&](int c) {
    return static_cast<char*>(flat.data_ptr()) +
           int64_t{(c % world + world) % world} * n * flat.element_size();
  };
  const int right = (rank + 1) % world, left = (rank + world - 1) % world;
  for (int s = 0; s < world - 1; ++s)
    MPI_Sendrecv(chunk(rank - s), n, type, right, 0, chunk(rank - s - 1), n, type, left, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

}  // namespace distributed::mpi
