// train.deterministic: kernels that give the same bits on every run, so that
// a GPU run repeats exactly (exact resume is bitwise on a GPU too):
// deterministic algorithms only (an op without one is an error, not a silent
// variation), cuBLAS with a fixed workspace (CUBLAS_WORKSPACE_CONFIG, set
// before the first cuBLAS call), cuDNN without autotuning. Attention is the
// paper's explicit matmul-softmax-matmul, deterministic as it is.
#pragma once

namespace runtime {

void use_deterministic_algorithms();

}  // namespace runtime
