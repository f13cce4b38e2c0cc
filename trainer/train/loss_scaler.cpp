#include "trainer/train/loss_scaler.h"

namespace train {

LossScaler::LossScaler(Options options, const checkpoint::LossScaleState& resumed,
                       const torch::Device& device)
    : options_(options) {
  const checkpoint::LossScaleState start =
      resumed.scale > 0 ? resumed : checkpoint::LossScaleState{options_.init_scale, 0};
  const auto on_device = torch::TensorOptions().device(device);
  scale_ = torch::full({}, options_.enabled ? start.scale : 1.0, on_device.dtype(torch::kDouble));
  good_steps_ = torch::full({}, start.good_steps, on_device.dtype(torch::kLong));
}

torch::Tensor LossScaler::absorb_overflow(const torch::Tensor& loss,
                                          const torch::Tensor& grad_norm) {
  if (!options_.enabled) return torch::zeros({}, grad_norm.options().dtype(torch::kBool));
  const torch::Tensor finite = grad_norm.isfinite();
  good_steps_ = torch::where(finite, good_steps_ + 1, torch::zeros_like(good_steps_));
  const torch::Tensor grow = good_steps_ == options_.growth_interval;
  scale_ = torch::where(grow, scale_ * options_.growth_factor, scale_);
  good_steps_ = torch::where(grow, torch::zeros_like(good_steps_), good_steps_);
  const torch::Tensor overflow = finite.logical_not() & loss.isfinite() & (scale_ > 1.0);
  scale_ = torch::where(overflow, scale_ * options_.backoff_factor, scale_);
  return overflow;
}

checkpoint::LossScaleState LossScaler::state() const {
  if (!options_.enabled) return {};
  return {scale_.item<double>(), good_steps_.item<int64_t>()};
}

}  // namespace train
