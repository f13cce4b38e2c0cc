// The rank that lags, named: over each log interval every rank's compute
// time (data, forward, backward, update: its step time less the time it
// stood waiting in collectives) is compared with the median of all ranks';
// a rank at `factor` times the median or more is named, so that a user can
// exclude its node (a throttled GPU, a bad link's host, a noisy neighbour).
//
// In data-parallel training the ranks wait for the slowest at every
// allreduce: a slow rank's compute time is long and its wait short, the
// others' the other way round, so compute time, not step time, singles it
// out. The median, not the mean, is the yardstick: one slow rank of two
// raises the mean as much as it exceeds it.
#pragma once
#include <cstdint>
#include <vector>

namespace train {

struct SlowRank {
  int rank = 0;
  double ratio = 0;  // its compute time / the median
};

// compute_s: each rank's compute seconds, in rank order. The ranks at
// `factor` times the median or more, slowest first; none when factor is 0
// or there is one rank.
std::vector<SlowRank> slow_ranks(const std::vector<double>& compute_s, double factor);

// The median of `values` (the mean of the two middle ones for an even count).
double median(std::vector<double> values);

}  // namespace train
