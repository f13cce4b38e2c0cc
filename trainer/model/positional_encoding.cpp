#include "trainer/model/positional_encoding.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace model {

namespace {

// The table [max_positions, d_model], computed in float64 for accuracy.
torch::Tensor sinusoid_table(int64_t d_model, int64_t max_positions) {
  using torch::indexing::None;
  using torch::indexing::Slice;
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  auto position = torch::arange(max_positions, f64).unsqueeze(1);  // [L, 1]
  // 1 / 10000^(2i / d_model) = exp(-2i * ln(10000) / d_model)       // [ceil(d/2)]
  auto div_term = torch::exp(torch::arange(0, d_model, 2, f64) * (-std::log(10000.0) / d_model));
  auto angle = position * div_term;  // [L, ceil(d/2)]
  auto pe = torch::zeros({max_positions, d_model}, f64);
  pe.index_put_({Slice(), Slice(0, None, 2)}, torch::sin(angle));
  pe.index_put_({Slice(), Slice(1, None, 2)}, torch::cos(angle.slice(1, 0, d_model / 2)));
  return pe.to(torch::kFloat32);
}

}  // namespace

PositionalEncodingImpl::PositionalEncodingImpl(int64_t d_model, double dropout,
                                               int64_t max_positions)
    : pe_(sinusoid_table(d_model, max_positions)),
      dropout_(register_module("dropout", Dropout(dropout))) {}

torch::Tensor PositionalEncodingImpl::forward(const torch::Tensor& x, int64_t offset) {
  const int64_t length = x.size(1);
  if (offset + length > pe_.size(0)) {
    throw std::out_of_range("positional encoding: a sequence of length " + std::to_string(length) +
                            " from position " + std::to_string(offset) +
                            " goes beyond max_positions = " + std::to_string(pe_.size(0)));
  }
  if (pe_.device() != x.device()) pe_ = pe_.to(x.device());
  // [B, T, d_model] + [T, d_model]
  return dropout_(x + pe_.slice(0, offset, offset + length).to(x.scalar_type()));
}

}  // namespace model
