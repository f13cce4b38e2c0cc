#include "trainer/dist/mpi_communicator.h"

#include <mpi.h>

#include <stdexcept>

namespace dist {

namespace {

MPI_Datatype mpi_type(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return MPI_FLOAT;
    case torch::kDouble: return MPI_DOUBLE;
    case torch::kLong: return MPI_INT64_T;
    case torch::kInt: return MPI_INT32_T;
    default: throw std::invalid_argument(std::string("MPI collectives: unsupported dtype ") +
                                         c10::toString(t.scalar_type()));
  }
}

void check_cpu_contiguous(const torch::Tensor& t) {
  if (!t.device().is_cpu() || !t.is_contiguous())
    throw std::invalid_argument("MPI collectives need contiguous CPU tensors");
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

void MpiCommunicator::allreduce_sum(torch::Tensor& tensor) {
  check_cpu_contiguous(tensor);
  if (world_size_ == 1) return;
  MPI_Allreduce(MPI_IN_PLACE, tensor.data_ptr(), static_cast<int>(tensor.numel()),
                mpi_type(tensor), MPI_SUM, MPI_COMM_WORLD);
}

void MpiCommunicator::broadcast(torch::Tensor& tensor, int root) {
  check_cpu_contiguous(tensor);
  if (world_size_ == 1) return;
  MPI_Bcast(tensor.data_ptr(), static_cast<int>(tensor.numel()), mpi_type(tensor), root,
            MPI_COMM_WORLD);
}

void MpiCommunicator::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace dist
