// Label smoothing (paper §5.4, epsilon_ls = 0.1) as in the Annotated
// Transformer: the target distribution q puts 1 - eps on the true token,
// eps / (V - 2) on every other token except padding, 0 on padding; the loss
// is KL(q || p) summed over non-padding positions, p = softmax(logits).
//
// Computed from the logits without building q ([N, V]): with c = 1 - eps,
// o = eps / (V - 2) and log p = log_softmax(logits) in float32,
//   KL = sum_v q_v log q_v  -  c log p_y  -  o (sum_v log p_v - log p_y - log p_pad)
// where the first term is the constant c log c + (V - 2) o log o: per-row
// reductions only. Since q sums to 1 the gradient is simply
//   dKL / dlogits = p - q = softmax(logits) - q                  [N, V]
// so backward keeps the logits (bfloat16 under autocast), not float32
// log-probabilities, and recomputes p. On a GPU the loss is memory-bound: its
// passes over [N, V] are its time. There (in a build with CUDA) two kernels
// of this project's compute it in one pass each way (smoothed_kl_kernels.h);
// elsewhere ATen's: forward makes two float32 passes over [N, V] (log-softmax,
// the row sums), backward two (softmax; the gradient, in place), and bfloat16
// logits add a cast each way.
#pragma once
#include <torch/torch.h>

namespace task {

struct LossSums {
  torch::Tensor smoothed;  // scalar: sum of KL(q || p) over target tokens (differentiable)
  torch::Tensor nll;       // scalar: sum of -log p_y (detached): perplexity = exp(nll / tokens)
  torch::Tensor tokens;    // scalar int64: non-padding target tokens (on the device: no sync)
};

class LabelSmoothingLoss {
 public:
  LabelSmoothingLoss(int64_t vocab, int64_t pad_id, double smoothing);
  // logits [B, T, V] (or [N, V]), any floating dtype (log-probabilities work
  // too: log_softmax leaves them unchanged); target [B, T] (or [N]) with
  // pad_id where ignored. The sums are float32 (float64 for float64 logits).
  LossSums operator()(const torch::Tensor& logits, const torch::Tensor& target) const;

 private:
  int64_t vocab_, pad_id_;
  double confidence_, off_value_, entropy_;  // c, o, sum_v q_v log q_v
};

}  // namespace task
