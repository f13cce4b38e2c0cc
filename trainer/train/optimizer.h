// The update of a step: Adam (adam_step.h) at the scheduled learning rate on
// the summed gradients times one factor (1 / target tokens, times the clip
// coefficient).
//
// Unsharded, every rank steps the same torch::optim::Adam over the whole model.
// Sharded (GradSync::sharded(), dist.shard_update): each rank steps an Adam
// over its own shard of every gradient bucket, and holds that shard's moments
// only (the step then allgathers the parameters: GradSync::gather_parameters).
//
// Checkpoints keep one format either way: optimizer.pt is written from and
// read into `whole`, an Adam over the model's parameters
// (checkpoint/optimizer_state.h). Sharded, the constructor hands each rank
// its shard of whatever `whole` holds (a resumed run's moments) and empties
// it; gather_state() fills it for a save (collective), release_state()
// empties it again.
#pragma once
#include <memory>

#include <torch/torch.h>

#include "trainer/distributed/grad_sync.h"

namespace train {

class Optimizer {
 public:
  Optimizer(torch::optim::Adam& whole, distributed::GradSync& sync);
  void step(double lr, double grad_factor);
  const char* kernel() const;  // how the update computes (adam_step.h)
  void gather_state();  // collective when sharded
  void release_state();

 private:
  torch::optim::Adam& whole_;
  distributed::GradSync& sync_;
  std::unique_ptr<torch::optim::Adam> shards_;  // sharded: over sync_.shard_parameters()
};

}  // namespace train
