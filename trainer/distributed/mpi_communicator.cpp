#include "trainer/distributed/mpi_communicator.h"

#include <mpi.h>

#include <exception>
#include <stdexcept>
#include <string>

#include "trainer/distributed/mpi_ring.h"
#include "trainer/distributed/mpi_staging.h"

namespace distributed {

using mpi::check_call;
using mpi::check_wait_on_main_thread;
using mpi::mpi_type;
using mpi::on_main_thread;
using mpi::Staged;

namespace {

// A collective in flight: its result's staging, finished on wait, and its
// input's, kept alive until then.
class MpiWork : public Work {
 public:
  MpiWork(MPI_Request request, Staged result, Staged input = Staged())
      : request_(request), staged_(std::move(result)), input_(std::move(input)) {}
  ~MpiWork() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    int done = 1;
    if (request_ != MPI_REQUEST_NULL) {
      if (!on_main_thread()) return false;  // progress is the main thread's
      MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    }
    return done != 0;
  }
  void wait() override {
    if (request_ != MPI_REQUEST_NULL) {
      check_wait_on_main_thread();
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }
    if (!finished_) staged_.finish();
    finished_ = true;
  }

 private:
  MPI_Request request_;
  Staged staged_, input_;
  bool finished_ = false;
};

// The number of elements each rank owns of `flat`, checked.
int shard_count(const torch::Tensor& flat, int world_size) {
  check_call(flat);
  if (flat.numel() % world_size != 0)
    throw std::invalid_argument("MPI reduce-scatter/allgather: " + std::to_string(flat.numel()) +
                                " elements do not split into " + std::to_string(world_size) +
                                " equal shards");
  return static_cast<int>(flat.numel() / world_size);
}

// A collective queued off the main thread: started by the main thread's next
// call into the communicator (`start_queued`), which test() and wait() make.
class DeferredWork : public Work {
 public:
  DeferredWork(std::shared_ptr<MpiCommunicator::Deferred> deferred,
               std::function<void()> start_queued)
      : deferred_(std::move(deferred)), start_queued_(std::move(start_queued)) {}
  bool test() override;
  void wait() override;

 private:
  std::shared_ptr<MpiCommunicator::Deferred> deferred_;
  std::function<void()> start_queued_;
};

}  // namespace

struct MpiCommunicator::Deferred {
  std::function<std::unique_ptr<Work>()> launch;
  std::unique_ptr<Work> work;  // once started
  std::exception_ptr failed;   // what launch() threw, for test() and wait() to rethrow
};

namespace {

bool DeferredWork::test() {
  if (!on_main_thread()) return false;
  start_queued_();
  if (deferred_->failed) std::rethrow_exception(deferred_->failed);
  return deferred_->work->test();
}

void DeferredWork::wait() {
  check_wait_on_main_thread();
  start_queued_();
  if (deferred_->failed) std::rethrow_exception(deferred_->failed);
  deferred_->work->wait();
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

// Every queued collective is started, also one whose work was dropped
// meanwhile: the other ranks issue it too.
void MpiCommunicator::start_deferred() {
  for (;;) {
    std::shared_ptr<Deferred> next;
    {
      const std::lock_guard<std::mutex> lock(deferred_mutex_);
      if (deferred_.empty()) return;
      next = std::move(deferred_.front());
      deferred_.pop_front();
    }
    try {
      next->work = next->launch();
    } catch (...) {
      next->failed = std::current_exception();
    }
  }
}

std::unique_ptr<Work> MpiCommunicator::issue(std::function<std::unique_ptr<Work>()> launch,
                                             bool blocking) {
  if (on_main_thread()) {
    start_deferred();  // those queued earlier go first
    return launch();
  }
  if (blocking)
    throw std::logic_error(
        "MPI: a blocking collective called off the main thread (MPI_THREAD_FUNNELED)");
  auto deferred = std::make_shared<Deferred>();
  deferred->launch = std::move(launch);
  {
    const std::lock_guard<std::mutex> lock(deferred_mutex_);
    deferred_.push_back(deferred);
  }
  return std::make_unique<DeferredWork>(std::move(deferred), [this] { start_deferred(); });
}

// Each collective in two forms: started (`request` set, finished by the
// work's wait) or run to completion (`request` null: MPI's blocking call,
// which Open MPI runs with faster algorithms than its non-blocking libnbc).
// Checked at once; its MPI calls run when issue() says.
std::unique_ptr<Work> MpiCommunicator::allreduce(torch::Tensor& tensor, bool start) {
  check_call(tensor);
  return issue(
      [this, tensor, start] {
        MPI_Request request = MPI_REQUEST_NULL;
        if (world_size_ == 1) return std::make_unique<MpiWork>(request, Staged());
        Staged staged(tensor, /*blocking=*/!start);
        const int n = static_cast<int>(tensor.numel());
        if (start)
          MPI_Iallreduce(MPI_IN_PLACE, staged.data(), n, mpi_type(tensor), MPI_SUM, MPI_COMM_WORLD,
                         &request);
        else
          MPI_Allreduce(MPI_IN_PLACE, staged.data(), n, mpi_type(tensor), MPI_SUM, MPI_COMM_WORLD);
        return std::make_unique<MpiWork>(request, std::move(staged));
      },
      /*blocking=*/!start);
}

std::unique_ptr<Work> MpiCommunicator::reduce_scatter(const torch::Tensor& flat,
                                                      torch::Tensor& shard, bool start) {
  const int n = shard_count(flat, world_size_);
  check_call(shard);
  if (shard.numel() != n || shard.scalar_type() != flat.scalar_type())
    throw std::invalid_argument("MPI reduce-scatter: the shard must hold " + std::to_string(n) +
                                " elements of the input's dtype");
  const auto* begin = static_cast<const char*>(flat.data_ptr());
  const auto* at = static_cast<const char*>(shard.data_ptr());
  if (world_size_ > 1 && at >= begin && at < begin + flat.nbytes())
    throw std::invalid_argument(
        "MPI reduce-scatter: the shard must not lie in the input (the ring uses it as scratch)");
  return issue(
      [this, flat, shard]() -> std::unique_ptr<Work> {
        if (world_size_ == 1) {
          if (!shard.is_same(flat)) shard.copy_(flat);
          return std::make_unique<MpiWork>(MPI_REQUEST_NULL, Staged());
        }
        // Tags 1..30000 (MPI guarantees at least 32767), in issue order: the
        // same on every rank, and far more than the rings ever in flight.
        const int tag = 1 + static_cast<int>(rings_started_++ % 30000);
        return mpi::start_ring_reduce_scatter(Staged(flat, /*blocking=*/false),
                                              Staged(shard, /*blocking=*/false), rank_, world_size_,
                                              tag);
      },
      /*blocking=*/!start);
}

std::unique_ptr<Work> MpiCommunicator::allgather_shards(torch::Tensor& flat, bool start) {
  const int n = shard_count(flat, world_size_);
  return issue(
      [this, flat, start, n] {
        MPI_Request request = MPI_REQUEST_NULL;
        if (world_size_ == 1) return std::make_unique<MpiWork>(request, Staged());
        Staged staged(flat, !start);
        if (start)
          MPI_Iallgather(MPI_IN_PLACE, n, mpi_type(flat), staged.data(), n, mpi_type(flat),
                         MPI_COMM_WORLD, &request);
        else
          mpi::ring_allgather(staged.host(), rank_, world_size_);
        return std::make_unique<MpiWork>(request, std::move(staged));
      },
      /*blocking=*/!start);
}

void MpiCommunicator::allreduce_sum(torch::Tensor& tensor) { allreduce(tensor, false)->wait(); }
std::unique_ptr<Work> MpiCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  return allreduce(tensor, true);
}
void MpiCommunicator::reduce_scatter_sum(const torch::Tensor& flat, torch::Tensor& shard) {
  reduce_scatter(flat, shard, false)->wait();
}
std::unique_ptr<Work> MpiCommunicator::ireduce_scatter_sum(const torch::Tensor& flat,
                                                           torch::Tensor& shard) {
  return reduce_scatter(flat, shard, true);
}
void MpiCommunicator::allgather_in_place(torch::Tensor& flat) {
  allgather_shards(flat, false)->wait();
}
std::unique_ptr<Work> MpiCommunicator::iallgather_in_place(torch::Tensor& flat) {
  return allgather_shards(flat, true);
}

void MpiCommunicator::broadcast(torch::Tensor& tensor, int root) {
  check_call(tensor);
  if (world_size_ == 1) return;
  issue(
      [&] {
        Staged staged(tensor, /*blocking=*/true);
        MPI_Bcast(staged.data(), static_cast<int>(tensor.numel()), mpi_type(tensor), root,
                  MPI_COMM_WORLD);
        staged.finish();
        return std::unique_ptr<Work>();
      },
      /*blocking=*/true);
}

torch::Tensor MpiCommunicator::allgather(const torch::Tensor& local) {
  const torch::Tensor send = local.contiguous();
  check_call(send);
  std::vector<int64_t> shape{world_size_};
  shape.insert(shape.end(), send.sizes().begin(), send.sizes().end());
  torch::Tensor out = torch::empty(shape, send.options());
  issue(
      [&] {
        Staged staged_send(send, /*blocking=*/true), staged_out(out, /*blocking=*/true);
        MPI_Allgather(staged_send.data(), static_cast<int>(send.numel()), mpi_type(send),
                      staged_out.data(), static_cast<int>(send.numel()), mpi_type(send),
                      MPI_COMM_WORLD);
        staged_out.finish();
        return std::unique_ptr<Work>();
      },
      /*blocking=*/true);
  return out;
}

void MpiCommunicator::barrier() {
  issue(
      [] {
        MPI_Barrier(MPI_COMM_WORLD);
        return std::unique_ptr<Work>();
      },
      /*blocking=*/true);
}

}  // namespace distributed
