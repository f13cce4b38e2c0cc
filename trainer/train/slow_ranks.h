// The rank that lags, named: over each log interval every rank's compute
// time (data, forward, backward, update: its step time less the time it
// stood waiting in collectives) is compared with the median of all ranks';
// a rank at `factor` times the median or more is named, so that a user can
// exclude its node (a throttled GPU, a bad link's host, a noisy neighbour).
//
// In data-parallel training the ranks wait for the slowest at every
// allreduce: a slow rank's compute time is long and its wait short, the
// others' the other way round, so compute time, not step time, singles it
// out. The yardstick is the lower median (of an even count, the lower of the
// two middle values): with half the ranks slow — one node of two — it is a
// fast rank's time, where the mean or the middle of the two would sit between
// the halves and never let a ratio reach 2.
#pragma once
#include <cstdint>
#include <vector>

namespace train {

struct SlowRank {
  int rank = 0;
  double ratio = 0;  // its compute time / the median
};

// compute_s: each rank's compute seconds, in rank order. The ranks at
// `factor` times the lower median or more, slowest first; none when factor
// is 0 or there is one rank.
std::vector<SlowRank> slow_ranks(const std::vector<double>& compute_s, double factor);

// The lower median of `values`: the ((n - 1) / 2)-th smallest (0-based).
double lower_median(std::vector<double> values);

}  // namespace train
