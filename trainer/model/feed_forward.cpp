#include "trainer/model/feed_forward.h"

namespace model {

PositionwiseFeedForwardImpl::PositionwiseFeedForwardImpl(int64_t d_model, int64_t d_ff, double dropout)
    : w_1_(register_module("w_1", torch::nn::Linear(d_model, d_ff))),
      w_2_(register_module("w_2", torch::nn::Linear(d_ff, d_model))),
      dropout_(register_module("dropout", torch::nn::Dropout(dropout))) {}

torch::Tensor PositionwiseFeedForwardImpl::forward(const torch::Tensor& x) {
  auto hidden = dropout_(torch::relu(w_1_(x)));  // max(0, x W_1 + b_1)   [B, T, d_ff]
  return w_2_(hidden);                           // (.) W_2 + b_2         [B, T, d_model]
}

}  // namespace model
