#include "trainer/distributed/mpi_staging.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <mpi.h>

#include <mpi-ext.h>  // after mpi.h: MPIX_Query_cuda_support

#include <limits>
#include <stdexcept>
#include <string>

namespace distributed::mpi {

namespace {

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

}  // namespace

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

void check_call(const torch::Tensor& t) {
  if (!t.is_contiguous()) throw std::invalid_argument("MPI collectives need contiguous tensors");
  if (t.numel() > std::numeric_limits<int>::max())
    throw std::invalid_argument("MPI collectives: tensor of " + std::to_string(t.numel()) +
                                " elements exceeds MPI's int count; use smaller buckets");
}

bool on_main_thread() {
  int main_thread = 0;
  MPI_Is_thread_main(&main_thread);
  return main_thread != 0;
}

void check_wait_on_main_thread() {
  if (!on_main_thread())
    throw std::logic_error(
        "MPI: a collective waited for off the main thread (MPI_THREAD_FUNNELED)");
}

Staged::Staged(torch::Tensor tensor, bool blocking) : tensor_(std::move(tensor)) {
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

void Staged::finish() {
  if (!buffer_.is_same(tensor_)) tensor_.copy_(buffer_, /*non_blocking=*/true);
}

}  // namespace distributed::mpi
