// The MPI communicator's plumbing (trainer/distributed/mpi_communicator.h):
// MPI datatypes of tensors, the checks every call makes, and the staging of
// CUDA tensors through pinned host memory.
#pragma once
#include <mpi.h>
#include <torch/torch.h>

namespace distributed::mpi {

MPI_Datatype mpi_type(const torch::Tensor& t);

// Contiguous memory, and counts that fit MPI's int; else std::invalid_argument.
void check_call(const torch::Tensor& t);

// MPI_THREAD_FUNNELED: the thread that initialised MPI is the only one that may call it.
bool on_main_thread();
// Throws std::logic_error off the main thread: waiting means calling MPI.
void check_wait_on_main_thread();

// The memory MPI works on for `tensor`: the tensor itself when it is on the
// CPU (or, for a blocking collective, MPI is CUDA-aware), else a pinned host
// copy that finish() copies back. Either way the device's queued work on it is
// complete first.
class Staged {
 public:
  Staged() = default;
  Staged(torch::Tensor tensor, bool blocking);
  void* data() const { return buffer_.data_ptr(); }
  const torch::Tensor& host() const { return buffer_; }
  // Results back into the tensor (a device copy queued on the current stream).
  void finish();

 private:
  torch::Tensor tensor_, buffer_;
};

}  // namespace distributed::mpi
