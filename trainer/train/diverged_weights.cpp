#include "trainer/train/diverged_weights.h"

#include <vector>

namespace train {

std::optional<DivergedParameter> first_diverged(const torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  const auto named = model.named_parameters();
  if (named.is_empty()) return std::nullopt;
  std::vector<torch::Tensor> largest;  // max |w| of each parameter (NaN where it holds one)
  for (const auto& p : named) largest.push_back(p.value().abs().max().to(torch::kDouble));
  const torch::Tensor on_host = torch::stack(largest).cpu();
  for (size_t i = 0; i < named.size(); ++i) {
    const double worst = on_host[static_cast<int64_t>(i)].item<double>();
    if (!(worst <= kDivergedWeight)) return DivergedParameter{named[i].key(), worst};  // NaN too
  }
  return std::nullopt;
}

}  // namespace train
