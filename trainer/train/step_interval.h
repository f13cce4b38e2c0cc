// "Every N steps" (train.log_every, train.valid_every, train.save_every,
// dist.check_every): due at the multiples of N, never when N is 0.
#pragma once
#include <cstdint>

namespace train {

struct StepInterval {
  int64_t every = 0;
  bool due(int64_t step) const { return every > 0 && step % every == 0; }
};

}  // namespace train
