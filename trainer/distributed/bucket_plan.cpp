#include "trainer/distributed/bucket_plan.h"

#include <algorithm>
#include <utility>

namespace distributed {

namespace {

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// Parameters in reverse order (roughly the order backward produces their
// gradients) into groups: a new one when the current one holds bucket_bytes
// or more, or the dtype or device changes.
std::vector<std::vector<size_t>> group_in_reverse(const std::vector<ParameterShape>& params,
                                                  int64_t bucket_bytes) {
  std::vector<std::vector<size_t>> groups;
  int64_t bytes = 0;  // of the last group
  for (size_t k = params.size(); k-- > 0;) {
    const ParameterShape& p = params[k];
    const bool fits = !groups.empty() && bytes < bucket_bytes &&
                      params[groups.back().front()].dtype == p.dtype &&
                      params[groups.back().front()].device == p.device;
    if (!fits) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(k);
    bytes += p.numel * static_cast<int64_t>(c10::elementSize(p.dtype));
  }
  return groups;
}

// Rank r's shard of the bucket (see PlannedBucket::shards).
Range shard_of(const PlannedBucket& bucket, int64_t r, const BucketPlanOptions& options) {
  const int64_t world = options.world_size;
  if (options.sharded) {
    const int64_t n = bucket.padded_numel / world;
    return {r * n, n};
  }
  const int64_t begin = bucket.numel * r / world, end = bucket.numel * (r + 1) / world;
  return {begin, end - begin};
}

// A group's parameters one after the other, each from the next line; the
// bucket padded and split into the ranks' shards.
PlannedBucket lay_out(std::vector<size_t> group, const std::vector<ParameterShape>& params,
                      const BucketPlanOptions& options) {
  PlannedBucket bucket;
  for (size_t k : group) {
    bucket.offsets.push_back(round_up(bucket.numel, options.line));
    bucket.numel = bucket.offsets.back() + params[k].numel;
  }
  bucket.params = std::move(group);
  bucket.padded_numel =
      options.sharded ? round_up(bucket.numel, options.world_size * options.line) : bucket.numel;
  for (int64_t r = 0; r < options.world_size; ++r)
    bucket.shards.push_back(shard_of(bucket, r, options));
  return bucket;
}

}  // namespace

BucketPlan plan_buckets(const std::vector<ParameterShape>& params,
                        const BucketPlanOptions& options) {
  BucketPlan plan;
  for (auto& group : group_in_reverse(params, options.bucket_bytes)) {
    PlannedBucket bucket = lay_out(std::move(group), params, options);
    bucket.begin = plan.numel;
    plan.numel += bucket.padded_numel;
    plan.buckets.push_back(std::move(bucket));
  }
  return plan;
}

std::vector<ShardPiece> pieces_in(const PlannedBucket& bucket, const Range& shard,
                                  const std::vector<ParameterShape>& params) {
  std::vector<ShardPiece> pieces;
  const int64_t shard_end = shard.begin + shard.numel;
  for (size_t i = 0; i < bucket.params.size(); ++i) {
    const int64_t begin = bucket.offsets[i], end = begin + params[bucket.params[i]].numel;
    const int64_t from = std::max(begin, shard.begin), to = std::min(end, shard_end);
    if (from < to)
      pieces.push_back({bucket.params[i], from - begin, from - shard.begin, to - from});
  }
  return pieces;
}

}  // namespace distributed
