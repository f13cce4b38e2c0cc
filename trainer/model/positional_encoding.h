// Sinusoidal positional encoding (paper, section 3.5), added to the embeddings
// and followed by dropout:
//   PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
//   PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
#pragma once
#include <torch/torch.h>

#include "trainer/model/dropout.h"

namespace model {

class PositionalEncodingImpl : public torch::nn::Module {
 public:
  PositionalEncodingImpl(int64_t d_model, double dropout, int64_t max_positions);

  // x at positions offset .. offset + T - 1: [B, T, d_model] -> [B, T, d_model];
  // throws std::out_of_range past max_positions.
  torch::Tensor forward(const torch::Tensor& x, int64_t offset = 0);

 private:
  // [max_positions, d_model] float32. A plain member, not a buffer: it is a
  // function of the config, so it stays out of saved state; forward() moves it
  // to the input's device.
  torch::Tensor pe_;
  Dropout dropout_{nullptr};
};
TORCH_MODULE(PositionalEncoding);

}  // namespace model
