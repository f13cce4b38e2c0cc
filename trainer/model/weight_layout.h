// A layout of the weights for decoding on the CPU.
//
// Every projection computes x W^T + b with W [out, in] (torch::linear: one
// GEMM, x [M, in] times W^T). Stored as LibTorch stores it, W is row-major,
// so the GEMM's second operand W^T is a transposed [in, out] matrix. BLAS
// libraries pack a row-major [in, out] operand faster (OpenBLAS's figures:
// docs/performance.md, "Why the code is as it is").
//
// store_weights_transposed keeps each matrix's shape and values and changes
// its strides only: its memory becomes that of W^T, row-major, and W is a
// transposed view of it. Whatever reads the weights works unchanged; an
// embedding table is transposed too (it may be the generator's weight), and
// a lookup then gathers a token's d_model entries from as many cache lines,
// a cost the speed-ups include. For inference only: training and
// the optimizer expect LibTorch's own layout (saving writes that layout:
// checkpoint::save_tensors).
#pragma once
#include <torch/torch.h>

namespace model {

// Every 2-D parameter of `module` (and its submodules) re-stored transposed.
void store_weights_transposed(torch::nn::Module& module);

}  // namespace model
