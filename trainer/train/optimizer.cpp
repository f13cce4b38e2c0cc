#include "trainer/train/optimizer.h"

#include <stdexcept>

#include "trainer/checkpoint/optimizer_state.h"

namespace train {
namespace {

using torch::optim::AdamParamState;

AdamParamState* stepped_state(torch::optim::Adam& adam, const torch::Tensor& p) {
  const auto it = adam.state().find(checkpoint::adam_state_key(p));
  return it == adam.state().end() ? nullptr : static_cast<AdamParamState*>(it->second.get());
}

// Moments of `params` in `adam` (zeros where it has none), and their common step count.
struct Moments {
  std::vector<torch::Tensor> exp_avg, exp_avg_sq;
  int64_t step = 0;
};

Moments moments_of(torch::optim::Adam& adam, const std::vector<torch::Tensor>& params) {
  Moments m;
  for (const auto& p : params) {
    const AdamParamState* s = stepped_state(adam, p);
    m.exp_avg.push_back(s ? s->exp_avg() : torch::zeros_like(p));
    m.exp_avg_sq.push_back(s ? s->exp_avg_sq() : torch::zeros_like(p));
    if (s && m.step != 0 && s->step() != m.step)
      throw std::runtime_error("optimizer state: parameters with different Adam step counts (" +
                               std::to_string(m.step) + ", " + std::to_string(s->step()) +
                               ") cannot be sharded");
    if (s) m.step = s->step();
  }
  return m;
}

void set_moments(torch::optim::Adam& adam, const std::vector<torch::Tensor>& params,
                 const Moments& m) {
  for (size_t i = 0; i < params.size(); ++i) {
    auto s = std::make_unique<AdamParamState>();
    s->step(m.step);
    s->exp_avg(m.exp_avg[i]);
    s->exp_avg_sq(m.exp_avg_sq[i]);
    adam.state()[checkpoint::adam_state_key(params[i])] = std::move(s);
  }
}

std::vector<torch::Tensor> params_of(torch::optim::Adam& adam) {
  return adam.param_groups().at(0).params();
}

}  // namespace

Optimizer::Optimizer(torch::optim::Adam& whole, distributed::GradSync& sync)
    : whole_(whole), sync_(sync) {
  if (!sync.sharded()) {
    adam_ = std::make_unique<AdamStep>(whole_);
    return;
  }
  if (whole.param_groups().size() != 1)
    throw std::logic_error("Optimizer: sharding needs one parameter group");
  shards_ = std::make_unique<torch::optim::Adam>(
      sync.shard_parameters(),
      static_cast<torch::optim::AdamOptions&>(whole.param_groups()[0].options()));
  if (!whole.state().empty()) {
    const Moments m = moments_of(whole, params_of(whole));
    set_moments(*shards_, sync.shard_parameters(),
                {sync.to_shards(m.exp_avg), sync.to_shards(m.exp_avg_sq), m.step});
  }
  whole.state().clear();  // each rank holds its shards' moments only
  adam_ = std::make_unique<AdamStep>(*shards_);
}

void Optimizer::step(double lr, const torch::Tensor& grad_factor, const torch::Tensor& skip) {
  (*adam_)(lr, grad_factor, skip);
}

std::string Optimizer::kernel() const {
  const AdamKernel kernel = adam_->kernel();
  if (kernel != AdamKernel::kOnePassLoop) return name(kernel);
  return std::string(name(kernel)) + " over " + std::to_string(one_pass_loop_threads()) +
         " thread(s)";
}

checkpoint::OptimizerFile Optimizer::checkpoint_file(const torch::nn::Module& model, int rank,
                                                     int world_size) {
  adam_->write_step_counts();
  if (!shards_)
    return rank == 0 ? checkpoint::OptimizerFile{checkpoint::kWholeOptimizerFile,
                                                 checkpoint::optimizer_tensors(whole_, model)}
                     : checkpoint::OptimizerFile{};
  checkpoint::OptimizerFile part{checkpoint::optimizer_part_name(rank, world_size), {}};
  if (shards_->state().empty()) return part;  // not stepped yet
  const auto names = model.named_parameters().keys();
  const Moments m = moments_of(*shards_, sync_.shard_parameters());
  const auto pieces = sync_.shard_pieces();
  for (size_t b = 0; b < pieces.size(); ++b)
    for (const auto& piece : pieces[b])
      checkpoint::add_moment_piece(part.tensors, names.at(piece.param), piece.param_begin,
                                   m.exp_avg[b].narrow(0, piece.shard_begin, piece.numel),
                                   m.exp_avg_sq[b].narrow(0, piece.shard_begin, piece.numel),
                                   m.step);
  return part;
}

}  // namespace train
