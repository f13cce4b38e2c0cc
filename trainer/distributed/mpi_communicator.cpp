#include "trainer/distributed/mpi_communicator.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <mpi.h>

#include <mpi-ext.h>  // after mpi.h: MPIX_Query_cuda_support

#include <exception>
#include <stdexcept>
#include <string>

namespace distributed {

namespace {

MPI_Datatype mpi_type(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return MPI_FLOAT;
    case torch::kDouble: return MPI_DOUBLE;
    case torch::kLong: return MPI_INT64_T;
    case torch::kInt: return MPI_INT32_T;
    case torch::kByte: return MPI_UINT8_T;
    default:
      throw std::invalid_argument(std::string("MPI collectives: unsupported dtype ") +
                                  c10::toString(t.scalar_type()));
  }
}

// Contiguous memory, and counts that fit MPI's int.
void check_call(const torch::Tensor& t) {
  if (!t.is_contiguous()) throw std::invalid_argument("MPI collectives need contiguous tensors");
  if (t.numel() > std::numeric_limits<int>::max())
    throw std::invalid_argument("MPI collectives: tensor of " + std::to_string(t.numel()) +
                                " elements exceeds MPI's int count; use smaller buckets");
}

// MPI_THREAD_FUNNELED: the thread that initialised MPI is the only one that may call it.
bool on_main_thread() {
  int main_thread = 0;
  MPI_Is_thread_main(&main_thread);
  return main_thread != 0;
}

// Open MPI built with CUDA support reads and writes device memory itself.
bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// The host waits for the work queued on the tensor's device (before MPI reads it).
void wait_for_device(const torch::Tensor& t) {
  if (t.is_cuda())
    c10::impl::getDeviceGuardImpl(t.device().type())->getStream(t.device()).synchronize();
}

// The memory MPI works on for `tensor`: the tensor itself when it is on the
// CPU (or, for a blocking collective, MPI is CUDA-aware), else a pinned host
// copy that finish() copies back. Either way the device's queued work on it is
// complete first.
class Staged {
 public:
  Staged() = default;
  Staged(torch::Tensor tensor, bool blocking) : tensor_(std::move(tensor)) {
    if (!tensor_.is_cuda()) {
      buffer_ = tensor_;
      return;
    }
    if (blocking && cuda_aware_mpi()) {
      wait_for_device(tensor_);
      buffer_ = tensor_;
      return;
    }
    buffer_ =
        torch::empty(tensor_.sizes(), tensor_.options().device(torch::kCPU).pinned_memory(true));
    buffer_.copy_(tensor_);  // device to host: the host waits for it
  }
  void* data() const { return buffer_.data_ptr(); }
  const torch::Tensor& host() const { return buffer_; }
  // Results back into the tensor (a device copy queued on the current stream).
  void finish() {
    if (!buffer_.is_same(tensor_)) tensor_.copy_(buffer_, /*non_blocking=*/true);
  }

 private:
  torch::Tensor tensor_, buffer_;
};

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
      if (!on_main_thread())
        throw std::logic_error(
            "MPI: a collective waited for off the main thread (MPI_THREAD_FUNNELED)");
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
    if (step_ < world_ - 1 && !on_main_thread())
      throw std::logic_error(
          "MPI: a collective waited for off the main thread (MPI_THREAD_FUNNELED)");
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

// Ring allgather in place: in world - 1 steps each rank passes on the chunk
// it got last (its own first) and receives the next.
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
  if (!on_main_thread())
    throw std::logic_error(
        "MPI: a collective waited for off the main thread (MPI_THREAD_FUNNELED)");
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
        return std::make_unique<RingReduceScatter>(Staged(flat, /*blocking=*/false),
                                                   Staged(shard, /*blocking=*/false), rank_,
                                                   world_size_, tag);
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
          ring_allgather(staged.host(), rank_, world_size_);
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
