#include "trainer/dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace dist {

namespace {

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA call ") + call + " failed: " +
                             cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* call) {
  if (status != ncclSuccess)
    throw std::runtime_error(std::string("NCCL call ") + call + " failed: " +
                             ncclGetErrorString(status));
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
    default: throw std::invalid_argument(std::string("NCCL collectives: unsupported dtype ") +
                                         c10::toString(t.scalar_type()));
  }
}

void check_tensor(const torch::Tensor& t, int device) {
  if (!t.device().is_cuda() || t.device().index() != device || !t.is_contiguous())
    throw std::invalid_argument("NCCL collectives need contiguous tensors on cuda:" +
                                std::to_string(device));
}

// The stream LibTorch computes on by default.
const cudaStream_t kComputeStream = cudaStreamLegacy;

class NcclWork : public Work {
 public:
  explicit NcclWork(cudaEvent_t done) : done_(done) {}
  ~NcclWork() override { cudaEventDestroy(done_); }
  bool test() override {
    const cudaError_t status = cudaEventQuery(done_);
    if (status == cudaErrorNotReady) return false;
    CUDA_CHECK(status);
    return true;
  }
  // The compute stream waits for the collective; the host does not.
  void wait() override { CUDA_CHECK(cudaStreamWaitEvent(kComputeStream, done_, 0)); }

 private:
  cudaEvent_t done_;
};

}  // namespace

struct NcclCommunicator::State {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;

  // The communication stream waits for what the compute stream queued so far.
  void follow_compute() const {
    cudaEvent_t ready;
    CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(ready, kComputeStream));
    CUDA_CHECK(cudaStreamWaitEvent(stream, ready, 0));
    CUDA_CHECK(cudaEventDestroy(ready));
  }
  cudaEvent_t record_done() const {
    cudaEvent_t done;
    CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(done, stream));
    return done;
  }
};

NcclCommunicator::NcclCommunicator(int device) : state_(std::make_unique<State>()) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  state_->device = device;
  CUDA_CHECK(cudaSetDevice(device));
  ncclUniqueId id;
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  NCCL_CHECK(ncclCommInitRank(&state_->comm, world_size_, id, rank_));
  CUDA_CHECK(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
}

NcclCommunicator::~NcclCommunicator() {
  if (state_->stream) cudaStreamSynchronize(state_->stream);
  if (state_->comm) ncclCommDestroy(state_->comm);
  if (state_->stream) cudaStreamDestroy(state_->stream);
}

void NcclCommunicator::allreduce_sum(torch::Tensor& tensor) {
  iallreduce_sum(tensor)->wait();
}

std::unique_ptr<Work> NcclCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  check_tensor(tensor, state_->device);
  state_->follow_compute();
  NCCL_CHECK(ncclAllReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                           nccl_type(tensor), ncclSum, state_->comm, state_->stream));
  return std::make_unique<NcclWork>(state_->record_done());
}

void NcclCommunicator::broadcast(torch::Tensor& tensor, int root) {
  check_tensor(tensor, state_->device);
  state_->follow_compute();
  NCCL_CHECK(ncclBroadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                           nccl_type(tensor), root, state_->comm, state_->stream));
  NcclWork(state_->record_done()).wait();
}

torch::Tensor NcclCommunicator::allgather(const torch::Tensor& local) {
  const torch::Tensor send = local.contiguous();
  check_tensor(send, state_->device);
  std::vector<int64_t> shape{world_size_};
  shape.insert(shape.end(), send.sizes().begin(), send.sizes().end());
  torch::Tensor out = torch::empty(shape, send.options());
  state_->follow_compute();
  NCCL_CHECK(ncclAllGather(send.data_ptr(), out.data_ptr(), send.numel(), nccl_type(send),
                           state_->comm, state_->stream));
  NcclWork(state_->record_done()).wait();
  return out;
}

void NcclCommunicator::barrier() {
  CUDA_CHECK(cudaStreamSynchronize(state_->stream));
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace dist
