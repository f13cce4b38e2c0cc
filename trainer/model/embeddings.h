// Learned token embeddings, scaled by sqrt(d_model) (paper, section 3.4).
#pragma once
#include <torch/torch.h>

namespace model {

class EmbeddingsImpl : public torch::nn::Module {
 public:
  EmbeddingsImpl(int64_t vocab, int64_t d_model);

  // [B, T] int64 -> [B, T, d_model]
  torch::Tensor forward(const torch::Tensor& tokens);

  // The table [vocab, d_model], for sharing between source and target and
  // tying with the generator.
  const torch::Tensor& weight() const { return lut_->weight; }

 private:
  torch::nn::Embedding lut_{nullptr};
  double scale_;  // sqrt(d_model)
};
TORCH_MODULE(Embeddings);

}  // namespace model
