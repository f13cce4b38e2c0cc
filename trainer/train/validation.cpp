#include "trainer/train/validation.h"

#include "data_pipeline/loader/collate.h"

namespace train {

Validator::Validator(const data::Dataset& valid, int64_t batch_tokens, int64_t every)
    : valid_(valid),
      batches_(data::length_sorted_batches(valid.lengths(), batch_tokens)),
      every_{every} {}

ValidationResult Validator::run(torch::nn::Module& model, task::Objective& objective,
                                distributed::Communicator& comm, const torch::Device& device,
                                choices::Precision precision) const {
  torch::NoGradGuard no_grad;
  model.eval();
  auto sums = torch::zeros({3}, torch::dtype(torch::kDouble).device(device));  // loss, nll, tokens
  for (size_t b = comm.rank(); b < batches_.size(); b += comm.world_size()) {
    std::vector<data::Example> examples;
    for (int64_t i : batches_[b]) examples.push_back(valid_.get(i));
    const data::Batch batch = data::collate(examples, valid_.manifest().special).to(device);
    task::LossSums s;
    {
      runtime::AutocastScope autocast(precision, device);
      s = objective.loss(batch);
    }
    sums[0] += s.smoothed.to(torch::kDouble);
    sums[1] += s.nll.to(torch::kDouble);
    sums[2] += s.tokens.to(torch::kDouble);
  }
  model.train();
  comm.allreduce_sum(sums);
  sums = sums.cpu();
  const double tokens = sums[2].item<double>();
  return {sums[0].item<double>() / tokens, sums[1].item<double>() / tokens, tokens};
}

}  // namespace train
