// Residual connection around a sublayer, with layer normalisation either
//   post-norm (the paper):                LayerNorm(x + Dropout(Sublayer(x)))
//   pre-norm (the Annotated Transformer): x + Dropout(Sublayer(LayerNorm(x)))
#pragma once
#include <torch/torch.h>

#include <functional>

#include "trainer/model/dropout.h"
#include "trainer/model/model_config.h"

namespace model {

class SublayerConnectionImpl : public torch::nn::Module {
 public:
  using Sublayer = std::function<torch::Tensor(const torch::Tensor&)>;

  explicit SublayerConnectionImpl(const ModelConfig& config);

  // x [B, T, d_model]; sublayer maps [B, T, d_model] -> [B, T, d_model]
  torch::Tensor forward(const torch::Tensor& x, const Sublayer& sublayer);

 private:
  NormPlacement placement_;
  torch::nn::LayerNorm norm_{nullptr};
  Dropout dropout_{nullptr};
};
TORCH_MODULE(SublayerConnection);

// The LayerNorm closing a pre-norm stack (encoder or decoder); empty for
// post-norm, whose every sublayer already ends in one.
torch::nn::LayerNorm make_final_norm(const ModelConfig& config);

}  // namespace model
