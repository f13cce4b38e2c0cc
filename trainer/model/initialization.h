// Parameter initialisation as in the Annotated Transformer: Xavier-uniform for
// every matrix (embeddings included), zero for every bias; LayerNorm gains
// keep their initial 1.
//
// It overwrites what the modules' constructors drew (LibTorch's defaults), but
// not their draws from the random generator: those come first, so they are
// part of the stream these values come from, and removing one would change
// every seeded run's initial weights.
#pragma once
#include <torch/torch.h>

namespace model {

void xavier_init(torch::nn::Module& module);

}  // namespace model
