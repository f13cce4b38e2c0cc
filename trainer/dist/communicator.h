// Collective operations across the ranks of a job, on whole tensors.
// Backends: MPI for CPU tensors (mpi_communicator.h).
#pragma once
#include <torch/torch.h>

namespace dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // In place: tensor = sum over ranks. Contiguous float/double/int64 tensors.
  virtual void allreduce_sum(torch::Tensor& tensor) = 0;
  // In place: every rank gets rank `root`'s tensor.
  virtual void broadcast(torch::Tensor& tensor, int root) = 0;
  virtual void barrier() = 0;
};

}  // namespace dist
