// Label smoothing (paper §5.4, epsilon_ls = 0.1) as in the Annotated
// Transformer: the target distribution q puts 1 - eps on the true token,
// eps / (V - 2) on every other token except padding, 0 on padding; the loss
// is KL(q || p) summed over non-padding positions.
//
// Computed without building q ([N, V]): with c = 1 - eps, o = eps / (V - 2),
//   KL = sum_v q_v log q_v  -  c log p_y  -  o (sum_v log p_v - log p_y - log p_pad)
// where the first term is the constant c log c + (V - 2) o log o.
#pragma once
#include <torch/torch.h>

namespace train {

struct LossSums {
  torch::Tensor smoothed;  // scalar: sum of KL(q || p) over target tokens (differentiable)
  torch::Tensor nll;       // scalar: sum of -log p_y (detached): perplexity = exp(nll / tokens)
  int64_t tokens = 0;      // non-padding target tokens
};

class LabelSmoothingLoss {
 public:
  LabelSmoothingLoss(int64_t vocab, int64_t pad_id, double smoothing);
  // log_probs [B, T, V] (or [N, V]); target [B, T] (or [N]) with pad_id where ignored.
  LossSums operator()(const torch::Tensor& log_probs, const torch::Tensor& target) const;

 private:
  int64_t vocab_, pad_id_;
  double confidence_, off_value_, entropy_;  // c, o, sum_v q_v log q_v
};

}  // namespace train
