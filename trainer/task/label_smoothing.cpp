#include "trainer/task/label_smoothing.h"

#include <cmath>
#include <stdexcept>

#include "build_options.h"
#if TRAINER_WITH_CUDA
#include "trainer/task/smoothed_kl_cuda.h"
#endif

namespace task {

namespace {

double x_log_x(double x) { return x > 0 ? x * std::log(x) : 0.0; }

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (logits [N, V], target [N], keep [N]) -> (sum of KL over kept rows, sum of
// -log p_y over kept rows). On a GPU (where built with CUDA) two kernels of
// this project's, one pass over [N, V] each way (smoothed_kl_kernels.h);
// else every pass over [N, V] is one ATen kernel. Backward keeps the logits only
// (bfloat16 under autocast), not a float32 [N, V] of log-probabilities.
class SmoothedKl : public torch::autograd::Function<SmoothedKl> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& target, const torch::Tensor& keep, int64_t pad,
                               double c, double o, double entropy) {
    ctx->saved_data["pad"] = pad;
    ctx->saved_data["c"] = c;
    ctx->saved_data["o"] = o;
#if TRAINER_WITH_CUDA
    if (cuda::takes(logits)) {
      const auto rows = cuda::smoothed_kl_rows(logits, {target, keep, pad, c, o}, entropy);
      ctx->save_for_backward({logits, target, keep, rows.lse});
      auto nll = rows.nll.sum();
      ctx->mark_non_differentiable({nll});
      return {rows.smoothed.sum(), nll};
    }
#endif
    const auto lp = torch::log_softmax(logits, 1, float_type(logits));  // [N, V], not kept
    const auto lp_y = lp.gather(1, target.unsqueeze(1)).squeeze(1);     // [N] log p_y
    auto per_token = entropy - c * lp_y;                                // [N]
    if (o > 0) per_token = per_token - o * (lp.sum(1) - lp_y - lp.select(1, pad));
    const auto smoothed = per_token.masked_fill(~keep, 0).sum();
    const auto nll = (-lp_y).masked_fill(~keep, 0).sum();
    ctx->save_for_backward({logits, target, keep});
    ctx->mark_non_differentiable({nll});
    return {smoothed, nll};
  }

  // dKL / dlogits = (p - q) w, w = the incoming gradient on kept rows, 0 on
  // padding rows. p is shifted by o - q where q is not o (its pad column and
  // each row's target), so that one pass, p <- (p - o) w in place, finishes
  // the gradient; then one cast to the logits' dtype (none for float32).
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto &logits = saved[0], &target = saved[1], &keep = saved[2];
    const double c = ctx->saved_data["c"].toDouble(), o = ctx->saved_data["o"].toDouble();
    const int64_t pad = ctx->saved_data["pad"].toInt();
#if TRAINER_WITH_CUDA
    if (saved.size() == 4) {  // the forward's kernel left each row's log-sum-exp
      TORCH_CHECK(!torch::GradMode::is_enabled(),
                  "the loss's CUDA kernels have no second derivative (create_graph)");
      return {cuda::smoothed_kl_grad(logits, {target, keep, pad, c, o}, saved[3], grad_outputs[0]),
              {}, {}, {}, {}, {}, {}};
    }
#endif
    auto p = torch::softmax(logits, 1, float_type(logits));  // [N, V]
    p.select(1, pad).add_(o);     // q_pad = 0
    p.scatter_add_(1, target.unsqueeze(1), torch::full({p.size(0), 1}, o - c, p.options()));
    const auto w = (keep.to(p.scalar_type()) * grad_outputs[0]).unsqueeze(1);  // [N, 1]
    torch::addcmul_out(p, -o * w, p, w);                                       // (p - o) w
    return {p.to(logits.scalar_type()), {}, {}, {}, {}, {}, {}};
  }

 private:
  // The loss's arithmetic: float32, or float64 for float64 logits.
  static torch::ScalarType float_type(const torch::Tensor& logits) {
    return logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
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

}  // namespace task
