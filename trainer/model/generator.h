// The generator: linear projection to the target vocabulary and log-softmax,
//   log p(y | x) = log_softmax(x W^T + b)
// The weight W [vocab, d_model] is either its own parameter or, when tied,
// the target embedding table (paper, section 3.4).
#pragma once
#include <torch/torch.h>

namespace model {

class GeneratorImpl : public torch::nn::Module {
 public:
  // tied_weight: a [vocab, d_model] parameter owned (and registered) by another
  // module, e.g. the target embedding; undefined for an own weight.
  GeneratorImpl(int64_t d_model, int64_t vocab, torch::Tensor tied_weight = {});

  // x W^T + b: [B, T, d_model] -> [B, T, vocab], in x's dtype (for a fused loss)
  torch::Tensor logits(const torch::Tensor& x);

  // log_softmax(logits(x)) in float32 whatever x's dtype: [B, T, vocab]
  torch::Tensor forward(const torch::Tensor& x);

  const torch::Tensor& weight() const { return weight_; }

 private:
  torch::Tensor weight_;  // [vocab, d_model]
  torch::Tensor bias_;    // [vocab]
};
TORCH_MODULE(Generator);

}  // namespace model
