// Communicator over MPI_COMM_WORLD for CPU tensors.
#pragma once
#include "trainer/dist/communicator.h"

namespace dist {

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator();
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  void allreduce_sum(torch::Tensor& tensor) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  void barrier() override;

 private:
  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace dist
