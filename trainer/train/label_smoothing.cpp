#include "trainer/train/label_smoothing.h"

#include <cmath>
#include <stdexcept>

namespace train {

namespace {
double x_log_x(double x) { return x > 0 ? x * std::log(x) : 0.0; }
}  // namespace

LabelSmoothingLoss::LabelSmoothingLoss(int64_t vocab, int64_t pad_id, double smoothing)
    : vocab_(vocab), pad_id_(pad_id) {
  if (vocab < 3) throw std::invalid_argument("label smoothing needs a vocabulary of >= 3 tokens");
  if (smoothing < 0 || smoothing >= 1)
    throw std::invalid_argument("label smoothing must be in [0, 1)");
  confidence_ = 1.0 - smoothing;
  off_value_ = smoothing / static_cast<double>(vocab - 2);
  entropy_ = x_log_x(confidence_) + static_cast<double>(vocab - 2) * x_log_x(off_value_);
}

LossSums LabelSmoothingLoss::operator()(const torch::Tensor& log_probs,
                                        const torch::Tensor& target) const {
  const auto lp = log_probs.reshape({-1, vocab_});              // [N, V]
  const auto y = target.reshape({-1});                            // [N]
  const auto keep = y.ne(pad_id_);                                // [N]
  const auto lp_true = lp.gather(1, y.unsqueeze(1)).squeeze(1);   // [N] log p_y
  auto per_token = entropy_ - confidence_ * lp_true;              // [N]
  if (off_value_ > 0) {
    const auto lp_rest = lp.sum(1) - lp_true - lp.select(1, pad_id_);
    per_token = per_token - off_value_ * lp_rest;
  }
  LossSums sums;
  sums.smoothed = per_token.masked_fill(~keep, 0).sum();
  sums.nll = (-lp_true).masked_fill(~keep, 0).sum().detach();
  sums.tokens = keep.sum().item<int64_t>();
  return sums;
}

}  // namespace train
