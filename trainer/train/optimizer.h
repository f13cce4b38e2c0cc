// The update of a step: Adam (adam_step.h) at the scheduled learning rate on
// the summed gradients times one factor (1 / target tokens, times the clip
// coefficient), unless the step is skipped; factor and skip are decided on the
// training device (train/step.h).
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
// it; gather_state() fills it for a save (collective; unsharded too, it brings
// the step counts the fused kernel keeps on the device into the state),
// release_state() empties it again.
#pragma once
#include <memory>

#include <torch/torch.h>

#include "trainer/distributed/grad_sync.h"
#include "trainer/train/adam_step.h"

namespace train {

class Optimizer {
 public:
  Optimizer(torch::optim::Adam& whole, distributed::GradSync& sync);
  // grad_factor (0-dim float64), skip (0-dim bool): on the parameters' device.
  void step(double lr, const torch::Tensor& grad_factor, const torch::Tensor& skip);
  const char* kernel() const;  // how the update computes (adam_step.h)
  void gather_state();         // collective when sharded
  void release_state();

 private:
  torch::optim::Adam& whole_;
  distributed::GradSync& sync_;
  std::unique_ptr<torch::optim::Adam> shards_;  // sharded: over sync_.shard_parameters()
  std::unique_ptr<AdamStep> adam_;              // steps *shards_, else whole_
};

}  // namespace train
