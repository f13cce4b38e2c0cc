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
// In a checkpoint (checkpoint/optimizer_state.h), unsharded, rank 0 writes
// every moment (optimizer.pt); sharded, each rank writes the pieces of the
// parameters its shards hold (its optimizer part), in parallel, without
// gathering them. Either is read into `whole`, an Adam over the model's
// parameters, whatever the world size that wrote it: sharded, the
// constructor hands each rank its shard of what `whole` holds (a resumed
// run's moments) and empties it.
#pragma once
#include <memory>
#include <string>

#include <torch/torch.h>

#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/train/adam_step.h"

namespace train {

class Optimizer {
 public:
  Optimizer(torch::optim::Adam& whole, distributed::GradSync& sync);
  // grad_factor (0-dim float64), skip (0-dim bool): on the parameters' device.
  void step(double lr, const torch::Tensor& grad_factor, const torch::Tensor& skip);
  std::string kernel() const;  // how the update computes (adam_step.h), over how many threads
  // What this rank writes of the state (the live tensors): `model` names the
  // parameters, in the order the sync was given them.
  checkpoint::OptimizerFile checkpoint_file(const torch::nn::Module& model, int rank,
                                            int world_size);

 private:
  torch::optim::Adam& whole_;
  distributed::GradSync& sync_;
  std::unique_ptr<torch::optim::Adam> shards_;  // sharded: over sync_.shard_parameters()
  std::unique_ptr<AdamStep> adam_;              // steps *shards_, else whole_
};

}  // namespace train
