#include "trainer/model/sublayer.h"

namespace model {

namespace {

torch::nn::LayerNorm layer_norm(const ModelConfig& config) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps));
}

}  // namespace

SublayerConnectionImpl::SublayerConnectionImpl(const ModelConfig& config)
    : placement_(config.norm),
      norm_(register_module("norm", layer_norm(config))),
      dropout_(register_module("dropout", Dropout(config.dropout))) {}

torch::Tensor SublayerConnectionImpl::forward(const torch::Tensor& x, const Sublayer& sublayer) {
  if (placement_ == NormPlacement::kPre) return x + dropout_(sublayer(norm_(x)));
  return norm_(x + dropout_(sublayer(x)));
}

torch::nn::LayerNorm make_final_norm(const ModelConfig& config) {
  if (config.norm == NormPlacement::kPost) return nullptr;
  return layer_norm(config);
}

}  // namespace model
