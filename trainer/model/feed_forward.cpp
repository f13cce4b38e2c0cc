#include "trainer/model/feed_forward.h"

namespace model {

PositionwiseFeedForwardImpl::PositionwiseFeedForwardImpl(int64_t d_model, int64_t d_ff,
                                                         double dropout)
    : w_1_(register_module("w_1", torch::nn::Linear(d_model, d_ff))),
      w_2_(register_module("w_2", torch::nn::Linear(d_ff, d_model))),
      dropout_(register_module("dropout", Dropout(dropout))) {}

torch::Tensor PositionwiseFeedForwardImpl::forward(const torch::Tensor& x) {
  // torch::linear: one addmm with the bias (Linear::forward adds it in a second pass)
  auto hidden = dropout_(
      torch::relu(torch::linear(x, w_1_->weight, w_1_->bias)));  // max(0, x W_1 + b_1) [B, T, d_ff]
  return torch::linear(hidden, w_2_->weight, w_2_->bias);        // (.) W_2 + b_2  [B, T, d_model]
}

}  // namespace model
