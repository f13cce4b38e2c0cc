#include "trainer/model/generator.h"

#include <cmath>

namespace model {

namespace {

// An own weight starts like torch::nn::Linear's: U(-1/sqrt(d_model), 1/sqrt(d_model)).
torch::Tensor own_weight(int64_t vocab, int64_t d_model) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(d_model));
  return torch::empty({vocab, d_model}).uniform_(-bound, bound);
}

}  // namespace

GeneratorImpl::GeneratorImpl(int64_t d_model, int64_t vocab, torch::Tensor tied_weight)
    : weight_(tied_weight.defined() ? tied_weight
                                    : register_parameter("weight", own_weight(vocab, d_model))),
      bias_(register_parameter("bias", torch::zeros({vocab}))) {
  TORCH_CHECK(weight_.sizes() == torch::IntArrayRef({vocab, d_model}), "generator weight must be [",
              vocab, ", ", d_model, "], got ", weight_.sizes());
}

torch::Tensor GeneratorImpl::logits(const torch::Tensor& x) {
  return torch::linear(x, weight_, bias_);  // x W^T + b, one addmm   [B, T, vocab]
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& x) {
  return torch::log_softmax(logits(x), -1, torch::kFloat32);  // [B, T, vocab]
}

}  // namespace model
