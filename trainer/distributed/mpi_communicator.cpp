#include "trainer/distributed/mpi_communicator.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <mpi.h>

#include <mpi-ext.h>  // after mpi.h: MPIX_Query_cuda_support

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

// Contiguous memory, on the main thread, and counts that fit MPI's int.
void check_call(const torch::Tensor& t) {
  if (!t.is_contiguous()) throw std::invalid_argument("MPI collectives need contiguous tensors");
  if (t.numel() > std::numeric_limits<int>::max())
    throw std::invalid_argument("MPI collectives: tensor of " + std::to_string(t.numel()) +
                                " elements exceeds MPI's int count; use smaller buckets");
  int main_thread = 0;
  MPI_Is_thread_main(&main_thread);
  if (!main_thread)
    throw std::logic_error("MPI collective called off the main thread (MPI_THREAD_FUNNELED)");
}

// Open MPI built with CUDA support reads and writes device memory itself.
bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// The memory MPI works on for `tensor`: the tensor itself when it is on the
// CPU (or MPI is CUDA-aware), else a pinned host copy that finish() copies
// back. Either way the device's queued work on it is complete first.
class Staged {
 public:
  explicit Staged(torch::Tensor tensor) : tensor_(std::move(tensor)) {
    if (!tensor_.defined() || !tensor_.is_cuda()) {
      buffer_ = tensor_;
      return;
    }
    if (cuda_aware_mpi()) {
      c10::impl::getDeviceGuardImpl(tensor_.device().type())
          ->getStream(tensor_.device())
          .synchronize();
      buffer_ = tensor_;
      return;
    }
    buffer_ =
        torch::empty(tensor_.sizes(), tensor_.options().device(torch::kCPU).pinned_memory(true));
    buffer_.copy_(tensor_);  // device to host: the host waits for it
  }
  void* data() const { return buffer_.data_ptr(); }
  // Results back into the tensor (a device copy queued on the current stream).
  void finish() {
    if (!buffer_.is_same(tensor_)) tensor_.copy_(buffer_, /*non_blocking=*/true);
  }

 private:
  torch::Tensor tensor_, buffer_;
};

class MpiWork : public Work {
 public:
  MpiWork(MPI_Request request, Staged staged) : request_(request), staged_(std::move(staged)) {}
  ~MpiWork() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    int done = 1;
    if (request_ != MPI_REQUEST_NULL) MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }
  void wait() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
    if (!finished_) staged_.finish();
    finished_ = true;
  }

 private:
  MPI_Request request_;
  Staged staged_;
  bool finished_ = false;
};

}  // namespace

MpiCommunicator::MpiCommunicator() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

void MpiCommunicator::allreduce_sum(torch::Tensor& tensor) { iallreduce_sum(tensor)->wait(); }

std::unique_ptr<Work> MpiCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  check_call(tensor);
  MPI_Request request = MPI_REQUEST_NULL;
  if (world_size_ == 1) return std::make_unique<MpiWork>(request, Staged(torch::Tensor()));
  Staged staged(tensor);
  MPI_Iallreduce(MPI_IN_PLACE, staged.data(), static_cast<int>(tensor.numel()), mpi_type(tensor),
                 MPI_SUM, MPI_COMM_WORLD, &request);
  return std::make_unique<MpiWork>(request, std::move(staged));
}

void MpiCommunicator::broadcast(torch::Tensor& tensor, int root) {
  check_call(tensor);
  if (world_size_ == 1) return;
  Staged staged(tensor);
  MPI_Bcast(staged.data(), static_cast<int>(tensor.numel()), mpi_type(tensor), root,
            MPI_COMM_WORLD);
  staged.finish();
}

torch::Tensor MpiCommunicator::allgather(const torch::Tensor& local) {
  const torch::Tensor send = local.contiguous();
  check_call(send);
  std::vector<int64_t> shape{world_size_};
  shape.insert(shape.end(), send.sizes().begin(), send.sizes().end());
  torch::Tensor out = torch::empty(shape, send.options());
  Staged staged_send(send), staged_out(out);
  MPI_Allgather(staged_send.data(), static_cast<int>(send.numel()), mpi_type(send),
                staged_out.data(), static_cast<int>(send.numel()), mpi_type(send), MPI_COMM_WORLD);
  staged_out.finish();
  return out;
}

void MpiCommunicator::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace distributed
