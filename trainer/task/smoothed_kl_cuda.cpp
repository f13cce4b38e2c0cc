#include "trainer/task/smoothed_kl_cuda.h"

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <limits>

#include "trainer/task/smoothed_kl_kernels.h"

namespace task::cuda {

namespace {

kernels::LogitType logit_type(const torch::Tensor& logits) {
  switch (logits.scalar_type()) {
    case torch::kHalf: return kernels::LogitType::kHalf;
    case torch::kBFloat16: return kernels::LogitType::kBFloat16;
    default: return kernels::LogitType::kFloat;
  }
}

const torch::Tensor& checked(const torch::Tensor& logits, int64_t pad) {
  TORCH_CHECK(takes(logits), "the loss kernels take [N, V] CUDA logits of float, half or bfloat16");
  TORCH_CHECK(pad >= 0 && pad < logits.size(1), "the padding id ", pad,
              " is outside the vocabulary of ", logits.size(1));
  return logits;
}

// The kernels' view of the inputs, made contiguous on the logits' device.
// Launched on the device's current stream (autograd runs backward on the
// stream forward used: Engine::evaluate_function's stream guard), with that
// device current.
struct Inputs {
  torch::Tensor logits, target, keep;
  kernels::SmoothedKlShape shape;
  Inputs(const torch::Tensor& x, const SmoothedKlTarget& q)
      : logits(checked(x, q.pad).contiguous()),
        target(q.target.to(x.device(), torch::kLong).contiguous()),
        keep(q.keep.to(x.device(), torch::kBool).contiguous()),
        shape{logits.data_ptr(),
              logit_type(logits),
              logits.size(0),
              logits.size(1),
              target.data_ptr<int64_t>(),
              keep.data_ptr<bool>(),
              q.pad,
              static_cast<float>(q.confidence),
              static_cast<float>(q.off_value)} {
    TORCH_CHECK(target.numel() == shape.rows && keep.numel() == shape.rows,
                "a target and a keep flag per row of the logits");
    TORCH_CHECK(shape.rows <= std::numeric_limits<int32_t>::max(), "more rows than one grid holds");
  }
};

}  // namespace

bool takes(const torch::Tensor& logits) {
  const auto type = logits.scalar_type();
  return logits.is_cuda() && logits.dim() == 2 &&
         (type == torch::kFloat || type == torch::kHalf || type == torch::kBFloat16);
}

SmoothedKlRows smoothed_kl_rows(const torch::Tensor& logits, const SmoothedKlTarget& q,
                                double entropy) {
  const c10::cuda::CUDAGuard device(logits.device());
  const Inputs in(logits, q);
  const auto options = in.logits.options().dtype(torch::kFloat);
  SmoothedKlRows rows{torch::empty({in.shape.rows}, options),
                      torch::empty({in.shape.rows}, options),
                      torch::empty({in.shape.rows}, options)};
  C10_CUDA_CHECK(kernels::smoothed_kl_rows(in.shape, entropy, rows.smoothed.data_ptr<float>(),
                                           rows.nll.data_ptr<float>(), rows.lse.data_ptr<float>(),
                                           c10::cuda::getCurrentCUDAStream().stream()));
  return rows;
}

torch::Tensor smoothed_kl_grad(const torch::Tensor& logits, const SmoothedKlTarget& q,
                               const torch::Tensor& lse, const torch::Tensor& grad_out) {
  const c10::cuda::CUDAGuard device(logits.device());
  const Inputs in(logits, q);
  const auto row_lse = lse.to(torch::kFloat).contiguous();
  const auto weight = grad_out.to(in.logits.device(), torch::kFloat).reshape({1}).contiguous();
  auto grad = torch::empty_like(in.logits);
  C10_CUDA_CHECK(kernels::smoothed_kl_grad(in.shape, row_lse.data_ptr<float>(),
                                           weight.data_ptr<float>(), grad.data_ptr(),
                                           c10::cuda::getCurrentCUDAStream().stream()));
  return grad;
}

}  // namespace task::cuda
