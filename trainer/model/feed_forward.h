// Position-wise feed-forward network (paper, section 3.3):
//   FFN(x) = max(0, x W_1 + b_1) W_2 + b_2
// with dropout after the ReLU, as in the Annotated Transformer.
#pragma once
#include <torch/torch.h>

#include "trainer/model/dropout.h"

namespace model {

class PositionwiseFeedForwardImpl : public torch::nn::Module {
 public:
  PositionwiseFeedForwardImpl(int64_t d_model, int64_t d_ff, double dropout);

  // [B, T, d_model] -> [B, T, d_model]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear w_1_{nullptr};  // d_model -> d_ff
  torch::nn::Linear w_2_{nullptr};  // d_ff -> d_model
  Dropout dropout_{nullptr};
};
TORCH_MODULE(PositionwiseFeedForward);

}  // namespace model
