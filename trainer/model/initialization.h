// Parameter initialisation as in the Annotated Transformer: Xavier-uniform for
// every matrix (embeddings included), zero for every bias; LayerNorm gains
// keep their initial 1.
#pragma once
#include <torch/torch.h>

namespace model {

void xavier_init(torch::nn::Module& module);

}  // namespace model
