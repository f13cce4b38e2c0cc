// Text classification with the Transformer encoder: the encoder of the paper
// (section 3.1) over the embedded, position-encoded text, its outputs averaged
// over the non-padding positions, and a linear layer to class scores:
//
//   h      = Encoder(PE(Embed(src)))                 [B, S, d_model]
//   pooled = sum_s mask_s h_s / sum_s mask_s          [B, d_model]
//   log p  = log_softmax(pooled W^T + b)              [B, num_labels]
#pragma once
#include <torch/torch.h>

#include "trainer/model/embeddings.h"
#include "trainer/model/encoder.h"
#include "trainer/model/model_config.h"
#include "trainer/model/positional_encoding.h"

namespace model {

class TransformerClassifierImpl : public torch::nn::Module {
 public:
  // Uses the config's source vocabulary and encoder fields; initialised like
  // the encoder-decoder (initialization.h).
  TransformerClassifierImpl(const ModelConfig& config, int64_t num_labels);

  // src [B, S] int64 (padded with pad_id) -> class scores (logits) [B, num_labels]
  torch::Tensor forward(const torch::Tensor& src);

  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;
  Embeddings embed_{nullptr};
  PositionalEncoding position_{nullptr};
  Encoder encoder_{nullptr};
  torch::nn::Linear head_{nullptr};
};
TORCH_MODULE(TransformerClassifier);

}  // namespace model
