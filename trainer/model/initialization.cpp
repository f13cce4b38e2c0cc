#include "trainer/model/initialization.h"

namespace model {

void xavier_init(torch::nn::Module& module) {
  for (auto& parameter : module.named_parameters()) {
    const auto& name = parameter.key();
    if (parameter->dim() > 1) {
      torch::nn::init::xavier_uniform_(parameter.value());
    } else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      torch::nn::init::zeros_(parameter.value());
    }
  }
}

}  // namespace model
