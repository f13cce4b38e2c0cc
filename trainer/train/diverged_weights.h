// Weights a diverged run left: a run that diverged must not leave them as a
// checkpoint, nor move `latest` to them (a resume would start from garbage).
// The numerics guard (numerics_guard.h) skips steps whose loss or gradient
// norm is not finite, but an update can still send weights to 1e30 with a
// finite loss. The trainer asks before every save.
#pragma once
#include <optional>
#include <string>

#include <torch/torch.h>

namespace train {

// A weight this large is a diverged run's: trained Transformers' weights stay
// within a few units (and an fp16 export's range ends at 65504).
constexpr double kDivergedWeight = 1e6;

struct DivergedParameter {
  std::string name;
  double largest;  // max |w|: NaN or inf when the parameter holds one
};

// The first parameter (registration order) holding a non-finite value or one
// beyond kDivergedWeight, or nothing. One host wait for all parameters.
std::optional<DivergedParameter> first_diverged(const torch::nn::Module& model);

}  // namespace train
