#include "trainer/model/embeddings.h"

#include <cmath>

namespace model {

EmbeddingsImpl::EmbeddingsImpl(int64_t vocab, int64_t d_model)
    : lut_(register_module("lut", torch::nn::Embedding(vocab, d_model))),
      scale_(std::sqrt(static_cast<double>(d_model))) {}

torch::Tensor EmbeddingsImpl::forward(const torch::Tensor& tokens) {
  return lut_(tokens) * scale_;  // [B, T, d_model]
}

}  // namespace model
