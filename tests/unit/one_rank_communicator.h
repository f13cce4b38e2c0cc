// A communicator of one rank for unit tests: a sum over one rank is the
// tensor itself, so the collectives leave their tensors as they are; each
// non-blocking one returns the work make_work() gives, which the test controls.
#pragma once
#include <memory>

#include "trainer/distributed/communicator.h"

namespace test_util {

class OneRankCommunicator : public distributed::Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  const char* backend() const override { return "one rank"; }
  void allreduce_sum(torch::Tensor&) override {}
  std::unique_ptr<distributed::Work> iallreduce_sum(torch::Tensor&) override { return make_work(); }
  std::unique_ptr<distributed::Work> ireduce_scatter_sum(const torch::Tensor& flat,
                                                         torch::Tensor& shard) override {
    if (!shard.is_same(flat)) shard.copy_(flat);
    return make_work();
  }
  std::unique_ptr<distributed::Work> iallgather_in_place(torch::Tensor&) override {
    return make_work();
  }
  void broadcast(torch::Tensor&, int) override {}
  torch::Tensor allgather(const torch::Tensor& local) override { return local.unsqueeze(0); }
  void barrier() override {}

 protected:
  virtual std::unique_ptr<distributed::Work> make_work() = 0;
};

}  // namespace test_util
