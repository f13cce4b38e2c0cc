// Adam's state in a checkpoint: state dicts of CPU tensors keyed by the
// parameter's name, which Python's torch.load reads. Either one file, which
// rank 0 writes when every rank holds all the moments:
//
//   optimizer.pt                 {"<parameter>.exp_avg": m, "<parameter>.exp_avg_sq": v,
//                                 "<parameter>.step": int64 []}
//
// or, when each rank holds its shard of them (dist.shard_update), one part
// per rank, written by that rank in parallel with the others: the pieces of
// the flattened parameters its shard covers (distributed/bucket_plan.h),
//
//   optimizer-00001-of-00004.pt  {"<parameter>.exp_avg": m.flatten()[b:e], ...exp_avg_sq,
//                                 "<parameter>.step": int64 [],
//                                 "<parameter>.elements": int64 [b, e]}
//
// (no entries for a parameter Adam has not stepped yet; a parameter may be
// split between parts). Loading assembles each parameter's moments from the
// files there are, checks that they cover it once, and puts them on its
// parameter's device: a checkpoint resumes on any number of ranks, sharded
// or not, on cuda:1 after cuda:0, or on a CPU-only host.
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/checkpoint/state_dict.h"

namespace checkpoint {

// The optimizer's state key of a parameter (a TensorImpl pointer in LibTorch
// >= 2.4, its printed address in 1.13).
using AdamStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
AdamStateKey adam_state_key(const torch::Tensor& param);

// What one rank writes of the optimizer's state: a file name ("" for none)
// and its state dict (the live tensors, copied by take_snapshot).
struct OptimizerFile {
  std::string name;
  NamedTensors tensors;
};

inline const char* const kWholeOptimizerFile = "optimizer.pt";
std::string optimizer_part_name(int rank, int world_size);  // optimizer-0000r-of-0000w.pt

// optimizer.pt's state dict: every parameter's moments and step count.
NamedTensors optimizer_tensors(torch::optim::Adam& optimizer, const torch::nn::Module& model);
// Adds to a part the piece of `param` whose flattened elements [begin,
// begin + exp_avg.numel()) the 1-d `exp_avg` and `exp_avg_sq` hold.
void add_moment_piece(NamedTensors& part, const std::string& param, int64_t begin,
                      const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq, int64_t step);

// The optimizer files among a checkpoint's file names: optimizer.pt, or
// every part of one rank count in rank order. Throws saying what is missing
// or mixed, worded to follow "<directory> holds" ("no optimizer state ...").
std::vector<std::string> optimizer_files(const std::vector<std::string>& names);

// Replaces the optimizer's state with the checkpoint directory's. A piece
// that does not fit its parameter, moments that do not cover a parameter
// once, differing step counts, or a name that is not a parameter: an error
// naming the file (or the directory) and the parameter.
void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const std::string& checkpoint_dir);
// The same from a checkpoint's verified files: every part is read and
// checked before the optimizer's state changes (a part that fails leaves it
// as it was: checkpoint::Unverified).
void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const CheckpointFiles& checkpoint);

}  // namespace checkpoint
