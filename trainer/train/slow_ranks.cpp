#include "trainer/train/slow_ranks.h"

#include <algorithm>
#include <stdexcept>

namespace train {

double lower_median(std::vector<double> values) {
  if (values.empty()) throw std::logic_error("the median of nothing");
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::vector<SlowRank> slow_ranks(const std::vector<double>& compute_s, double factor) {
  std::vector<SlowRank> slow;
  if (factor <= 0 || compute_s.size() < 2) return slow;
  const double typical = lower_median(compute_s);
  if (typical <= 0) return slow;
  for (size_t r = 0; r < compute_s.size(); ++r)
    if (compute_s[r] >= factor * typical)
      slow.push_back({static_cast<int>(r), compute_s[r] / typical});
  std::sort(slow.begin(), slow.end(),
            [](const SlowRank& a, const SlowRank& b) { return a.ratio > b.ratio; });
  return slow;
}

}  // namespace train
