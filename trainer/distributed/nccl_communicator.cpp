#include "trainer/distributed/nccl_communicator.h"

#include <c10/core/Event.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "base/logging.h"

// Events are c10::Event, never a raw cudaEvent_t: c10's query clears the "not
// ready" that a raw query leaves as the thread's last CUDA error, for the next
// ATen kernel to throw. Why each CUDA and NCCL call here is made as it is:
// docs/DESIGN.md, "Gradient buckets and the NCCL communicator".

namespace distributed {

namespace {

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA call ") + call +
                             " failed: " + cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* call) {
  if (status != ncclSuccess)
    throw std::runtime_error(std::string("NCCL call ") + call +
                             " failed: " + ncclGetErrorString(status));
}

#define CUDA_CHECK(call) check_cuda((call), #call)
#define NCCL_CHECK(call) check_nccl((call), #call)

ncclDataType_t nccl_type(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return ncclFloat32;
    case torch::kDouble: return ncclFloat64;
    case torch::kHalf: return ncclFloat16;
    case torch::kBFloat16: return ncclBfloat16;
    case torch::kLong: return ncclInt64;
    case torch::kInt: return ncclInt32;
    case torch::kByte: return ncclUint8;
    default:
      throw std::invalid_argument(std::string("NCCL collectives: unsupported dtype ") +
                                  c10::toString(t.scalar_type()));
  }
}

void check_tensor(const torch::Tensor& t, int device) {
  if (!t.device().is_cuda() || t.device().index() != device || !t.is_contiguous())
    throw std::invalid_argument("NCCL collectives need contiguous tensors on cuda:" +
                                std::to_string(device));
}

// "2.30.7 (/path/to/libnccl.so.2)": the NCCL this process really loaded.
std::string nccl_version() {
  int code = 0;
  NCCL_CHECK(ncclGetVersion(&code));
  Dl_info info{};
  const bool found = dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) != 0;
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100) + " (" + (found ? info.dli_fname : "?") + ")";
}

}  // namespace

struct NcclCommunicator::State {
  explicit State(int cuda_device)
      : device(cuda_device),
        stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true,
                                            static_cast<c10::DeviceIndex>(cuda_device))) {}
  const int device;
  ncclComm_t comm = nullptr;
  const c10::cuda::CUDAStream stream;  // the collectives' own, of this rank's device
  std::mutex mutex;                    // serialises the asynchronous-error query and the abort flag
  bool aborted = false;                // by abort(): comm is gone
  std::string first_error;             // the asynchronous error that led to the abort, if one did

  // The compute stream: LibTorch's current stream of this rank's device, on
  // the calling thread (autograd's device thread runs backward on the forward's).
  c10::Stream compute() const { return c10::cuda::getCurrentCUDAStream(device); }

  // Every collective: this rank's device must be current (another one means
  // LibTorch's work of this step went to another GPU: fail, naming both); the
  // guard holds it for the collective's CUDA and NCCL calls.
  c10::cuda::CUDAGuard enter() const {
    int current = -1;
    CUDA_CHECK(cudaGetDevice(&current));
    if (current != device)
      throw std::logic_error("NCCL collective issued with cuda:" + std::to_string(current) +
                             " current, but this rank's device is cuda:" + std::to_string(device));
    return c10::cuda::CUDAGuard(static_cast<c10::DeviceIndex>(device));
  }
  // Calls that may come from another thread (the watchdog's abort, the
  // destructor's synchronisation): this rank's device for their duration.
  c10::cuda::CUDAGuard guard() const {
    return c10::cuda::CUDAGuard(static_cast<c10::DeviceIndex>(device));
  }

  // Before a collective: the communication stream waits for the compute
  // stream's queued work, and `t`'s memory stays reserved until it is done.
  void follow_compute(const torch::Tensor& t) const {
    c10::Event ready(c10::DeviceType::CUDA);  // PYTORCH_DEFAULT: no timing, as ProcessGroupNCCL's
    ready.record(compute());
    ready.block(stream);
    c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), stream);
  }
  // After a collective: an event that completes with it.
  c10::Event record_done() const {
    c10::Event done(c10::DeviceType::CUDA);
    done.record(stream);
    return done;
  }
  // NCCL's asynchronous error (a peer failed, a network error), or "": asked by
  // the main thread and the watchdog's, so serialised (NCCL does not promise
  // the query is thread-safe). After an abort: the error that caused it.
  std::string async_error() {
    const std::lock_guard<std::mutex> lock(mutex);
    if (aborted) return first_error.empty() ? "the NCCL communicator was aborted" : first_error;
    ncclResult_t async = ncclSuccess;
    const ncclResult_t status = ncclCommGetAsyncError(comm, &async);
    if (status != ncclSuccess) async = status;
    if (async == ncclSuccess) return "";
    first_error = std::string("NCCL asynchronous error: ") + ncclGetErrorString(async);
    return first_error;
  }
  // Raises that error, after aborting the communicator so that nothing waits on it forever.
  void check_async() {
    const std::string error = async_error();
    if (error.empty()) return;
    abort();
    throw std::runtime_error(error + "; communicator aborted");
  }
  // The host waits for `event`, watching for NCCL errors meanwhile.
  void host_wait(const c10::Event& event) {
    while (!event.query()) {
      check_async();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // From any thread (the main one on an error, the watchdog's helper thread),
  // under this rank's device guard (on a thread that never chose a device,
  // NCCL would make a context on device 0). It may block, so it runs outside
  // the mutex, and the watchdog bounds the wait (train/watchdog.h).
  void abort() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (aborted) return;
      aborted = true;
    }
    const auto on_device = guard();
    ncclCommAbort(comm);
  }
};

namespace {

class NcclWork : public Work {
 public:
  NcclWork(std::shared_ptr<NcclCommunicator::State> state, c10::Event done)
      : state_(std::move(state)), done_(std::move(done)) {}
  // Only the main thread calls it (GradSync polls only communicators that
  // need it, and NCCL's collectives progress on their own).
  bool test() override {
    if (done_.query()) return true;
    state_->check_async();
    return false;
  }
  // The compute stream waits for the collective; the host does not.
  void wait() override { done_.block(state_->compute()); }
  // The host waits too (a result the host reads next).
  void host_wait() { state_->host_wait(done_); }

 private:
  std::shared_ptr<NcclCommunicator::State> state_;
  c10::Event done_;
};

}  // namespace

NcclCommunicator::NcclCommunicator(int device) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  state_ = std::make_shared<State>(device);
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  NCCL_CHECK(ncclCommInitRank(&state_->comm, world_size_, id, rank_));
  logging::info("NCCL {} on cuda:{} (rank {} of {})", nccl_version(), device, rank_, world_size_);
}

NcclCommunicator::~NcclCommunicator() {
  {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->aborted) return;  // comm is gone
  }
  const auto on_device = state_->guard();
  cudaStreamSynchronize(state_->stream.stream());
  ncclCommDestroy(state_->comm);
}

void NcclCommunicator::allreduce_sum(torch::Tensor& tensor) { iallreduce_sum(tensor)->wait(); }

std::unique_ptr<Work> NcclCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  const auto on_device = state_->enter();
  check_tensor(tensor, state_->device);
  state_->check_async();
  state_->follow_compute(tensor);
  NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), nccl_type(tensor),
                           ncclSum, state_->comm, state_->stream.stream()));
  return std::make_unique<NcclWork>(state_, state_->record_done());
}

std::unique_ptr<Work> NcclCommunicator::ireduce_scatter_sum(const torch::Tensor& flat,
                                                            torch::Tensor& shard) {
  const auto on_device = state_->enter();
  check_tensor(flat, state_->device);
  check_tensor(shard, state_->device);
  if (flat.numel() != shard.numel() * world_size_ || shard.scalar_type() != flat.scalar_type())
    throw std::invalid_argument(
        "NCCL reduce-scatter: the shard must hold 1/world_size of the "
        "input's elements, of its dtype");
  state_->check_async();
  state_->follow_compute(flat);
  c10::cuda::CUDACachingAllocator::recordStream(shard.storage().data_ptr(), state_->stream);
  NCCL_CHECK(ncclReduceScatter(flat.data_ptr(), shard.data_ptr(), shard.numel(), nccl_type(flat),
                               ncclSum, state_->comm, state_->stream.stream()));
  return std::make_unique<NcclWork>(state_, state_->record_done());
}

std::unique_ptr<Work> NcclCommunicator::iallgather_in_place(torch::Tensor& flat) {
  const auto on_device = state_->enter();
  check_tensor(flat, state_->device);
  if (flat.numel() % world_size_ != 0)
    throw std::invalid_argument("NCCL allgather: the tensor does not split into equal shards");
  const int64_t n = flat.numel() / world_size_;
  state_->check_async();
  state_->follow_compute(flat);
  // In place: this rank's shard is the send buffer, at its offset in the output.
  NCCL_CHECK(ncclAllGather(static_cast<char*>(flat.data_ptr()) + rank_ * n * flat.element_size(),
                           flat.data_ptr(), n, nccl_type(flat), state_->comm,
                           state_->stream.stream()));
  return std::make_unique<NcclWork>(state_, state_->record_done());
}

void NcclCommunicator::broadcast(torch::Tensor& tensor, int root) {
  const auto on_device = state_->enter();
  check_tensor(tensor, state_->device);
  state_->check_async();
  state_->follow_compute(tensor);
  NCCL_CHECK(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), nccl_type(tensor),
                           root, state_->comm, state_->stream.stream()));
  NcclWork(state_, state_->record_done()).wait();
}

torch::Tensor NcclCommunicator::allgather(const torch::Tensor& local) {
  const auto on_device = state_->enter();
  const torch::Tensor send = local.contiguous();
  check_tensor(send, state_->device);
  std::vector<int64_t> shape{world_size_};
  shape.insert(shape.end(), send.sizes().begin(), send.sizes().end());
  torch::Tensor out = torch::empty(shape, send.options());
  state_->check_async();
  state_->follow_compute(send);
  c10::cuda::CUDACachingAllocator::recordStream(out.storage().data_ptr(), state_->stream);
  NCCL_CHECK(ncclAllGather(send.data_ptr(), out.data_ptr(), send.numel(), nccl_type(send),
                           state_->comm, state_->stream.stream()));
  NcclWork(state_, state_->record_done()).wait();
  return out;
}

void NcclCommunicator::barrier() {
  const auto on_device = state_->enter();
  NcclWork(state_, state_->record_done()).host_wait();
  MPI_Barrier(MPI_COMM_WORLD);
}

void NcclCommunicator::abort() { state_->abort(); }

std::string NcclCommunicator::async_error() { return state_->async_error(); }

}  // namespace distributed
