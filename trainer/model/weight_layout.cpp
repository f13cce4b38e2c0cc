#include "trainer/model/weight_layout.h"

namespace model {

void store_weights_transposed(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& weight : module.parameters())
    if (weight.dim() == 2) weight.set_(weight.t().contiguous().t());  // [out, in], strides (1, out)
}

}  // namespace model
