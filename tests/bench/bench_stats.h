// What the benchmark programs report of repeated timings.
#pragma once
#include <algorithm>
#include <vector>

namespace bench {

// The median (of an even count, the upper of the two middle values).
inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace bench
