#include "trainer/dist/mpi_communicator.h"

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace dist {

namespace {

MPI_Datatype mpi_type(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat: return MPI_FLOAT;
    case torch::kDouble: return MPI_DOUBLE;
    case torch::kLong: return MPI_INT64_T;
    case torch::kInt: return MPI_INT32_T;
    case torch::kByte: return MPI_UINT8_T;
    default: throw std::invalid_argument(std::string("MPI collectives: unsupported dtype ") +
                                         c10::toString(t.scalar_type()));
  }
}

// Contiguous CPU memory, on the main thread, and counts that fit MPI's int.
void check_call(const torch::Tensor& t) {
  if (!t.device().is_cpu() || !t.is_contiguous())
    throw std::invalid_argument("MPI collectives need contiguous CPU tensors");
  if (t.numel() > std::numeric_limits<int>::max())
    throw std::invalid_argument("MPI collectives: tensor of " + std::to_string(t.numel()) +
                                " elements exceeds MPI's int count; use smaller buckets");
  int main_thread = 0;
  MPI_Is_thread_main(&main_thread);
  if (!main_thread)
    throw std::logic_error("MPI collective called off the main thread (MPI_THREAD_FUNNELED)");
}

class MpiWork : public Work {
 public:
  explicit MpiWork(MPI_Request request) : request_(request) {}
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
  }

 private:
  MPI_Request request_;
};

}  // namespace

MpiCommunicator::MpiCommunicator() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

void MpiCommunicator::allreduce_sum(torch::Tensor& tensor) {
  check_call(tensor);
  if (world_size_ == 1) return;
  MPI_Allreduce(MPI_IN_PLACE, tensor.data_ptr(), static_cast<int>(tensor.numel()),
                mpi_type(tensor), MPI_SUM, MPI_COMM_WORLD);
}

std::unique_ptr<Work> MpiCommunicator::iallreduce_sum(torch::Tensor& tensor) {
  check_call(tensor);
  MPI_Request request = MPI_REQUEST_NULL;
  if (world_size_ > 1)
    MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), static_cast<int>(tensor.numel()),
                   mpi_type(tensor), MPI_SUM, MPI_COMM_WORLD, &request);
  return std::make_unique<MpiWork>(request);
}

void MpiCommunicator::broadcast(torch::Tensor& tensor, int root) {
  check_call(tensor);
  if (world_size_ == 1) return;
  MPI_Bcast(tensor.data_ptr(), static_cast<int>(tensor.numel()), mpi_type(tensor), root,
            MPI_COMM_WORLD);
}

torch::Tensor MpiCommunicator::allgather(const torch::Tensor& local) {
  const torch::Tensor send = local.contiguous();
  check_call(send);
  std::vector<int64_t> shape{world_size_};
  shape.insert(shape.end(), send.sizes().begin(), send.sizes().end());
  torch::Tensor out = torch::empty(shape, send.options());
  MPI_Allgather(send.data_ptr(), static_cast<int>(send.numel()), mpi_type(send), out.data_ptr(),
                static_cast<int>(send.numel()), mpi_type(send), MPI_COMM_WORLD);
  return out;
}

void MpiCommunicator::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace dist
