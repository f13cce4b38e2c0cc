#include "trainer/train/label_smoothing.h"

#include <cmath>
#include <stdexcept>

namespace train {

namespace {

double x_log_x(double x) { return x > 0 ? x * std::log(x) : 0.0; }

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (logits [N, V], target [N], keep [N]) -> (sum of KL over kept rows, sum of
// -log p_y over kept rows). log p = z - lse with z the logits in float32 and
// lse the per-row log-sum-exp: the sums need only per-row reductions of z, and
// backward keeps the logits (bfloat16 under autocast) and lse [N], not a
// float32 [N, V] of log-probabilities.
class SmoothedKl : public torch::autograd::Function<SmoothedKl> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& target, const torch::Tensor& keep, int64_t pad,
                               double c, double o, double entropy) {
    const auto float_type = logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
    const auto z = logits.to(float_type);                                 // [N, V]
    const auto lse = torch::logsumexp(z, 1);                              // [N]
    const auto lp_y = z.gather(1, target.unsqueeze(1)).squeeze(1) - lse;  // [N] log p_y
    auto per_token = entropy - c * lp_y;                                  // [N]
    if (o > 0) {
      const auto lp_sum = z.sum(1) - static_cast<double>(z.size(1)) * lse;  // [N] sum_v log p_v
      per_token = per_token - o * (lp_sum - lp_y - (z.select(1, pad) - lse));
    }
    const auto smoothed = per_token.masked_fill(~keep, 0).sum();
    const auto nll = (-lp_y).masked_fill(~keep, 0).sum();
    ctx->save_for_backward({logits, lse, target, keep});
    ctx->saved_data["pad"] = pad;
    ctx->saved_data["c"] = c;
    ctx->saved_data["o"] = o;
    ctx->mark_non_differentiable({nll});
    return {smoothed, nll};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto &logits = saved[0], &lse = saved[1], &target = saved[2], &keep = saved[3];
    const double c = ctx->saved_data["c"].toDouble(), o = ctx->saved_data["o"].toDouble();
    const auto float_type = logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
    auto grad = (logits.to(float_type) - lse.unsqueeze(1)).exp_();  // [N, V] p
    if (o > 0) {
      grad.sub_(o);                                            // p - o everywhere
      grad.select(1, ctx->saved_data["pad"].toInt()).add_(o);  // but p - 0 at pad
    }
    grad.scatter_add_(1, target.unsqueeze(1),
                      torch::full({grad.size(0), 1}, o - c, grad.options()));  // p - c at y
    grad.mul_((keep.to(grad.scalar_type()) * grad_outputs[0]).unsqueeze(1));   // 0 on padding rows
    return {grad.to(logits.scalar_type()), {}, {}, {}, {}, {}, {}};
  }
};

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

LossSums LabelSmoothingLoss::operator()(const torch::Tensor& logits,
                                        const torch::Tensor& target) const {
  const auto y = target.reshape({-1});  // [N]
  const auto keep = y.ne(pad_id_);      // [N]
  const auto sums = SmoothedKl::apply(logits.reshape({-1, vocab_}), y, keep, pad_id_, confidence_,
                                      off_value_, entropy_);
  return {sums[0], sums[1], keep.sum()};
}

}  // namespace train
