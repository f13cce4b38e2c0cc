// GradSync's bucket plan (distributed/bucket_plan.h), without ranks: which
// parameters go into which bucket and in what order, each one's offset (a
// multiple of the 16-element line), each bucket's padded size and place, and
// each rank's shard. Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>
#include <vector>

#include "trainer/distributed/bucket_plan.h"

namespace {

using distributed::BucketPlanOptions;
using distributed::ParameterShape;
using distributed::plan_buckets;
using distributed::Range;

std::vector<ParameterShape> floats(const std::vector<int64_t>& numels) {
  std::vector<ParameterShape> params;
  for (int64_t n : numels) params.push_back({n, c10::kFloat, c10::kCPU});
  return params;
}

BucketPlanOptions options(int64_t bucket_bytes, int64_t world_size, bool sharded) {
  BucketPlanOptions o;
  o.bucket_bytes = bucket_bytes;
  o.world_size = world_size;
  o.sharded = sharded;
  return o;
}

std::vector<std::vector<size_t>> params_of(const distributed::BucketPlan& plan) {
  std::vector<std::vector<size_t>> params;
  for (const auto& bucket : plan.buckets) params.push_back(bucket.params);
  return params;
}

// Each shard as (begin, numel).
using Shards = std::vector<std::pair<int64_t, int64_t>>;
Shards shards_of(const distributed::PlannedBucket& bucket) {
  Shards shards;
  for (const Range& r : bucket.shards) shards.emplace_back(r.begin, r.numel);
  return shards;
}

// float32 sizes 10, 20, 5, 3 (40, 80, 20, 12 bytes), cap 64 bytes, taken last
// first: the bucket holds 12 bytes after p3, 32 after p2 (both under the cap,
// so it stays open), 112 after p1 (full): p0 opens the next.
// Offsets in the first: p3 at 0, ends 3; p2 at 16, ends 21; p1 at 32, ends 52.
TEST(BucketPlan, TakesParametersLastFirstUntilTheCapIsReached) {
  const auto plan = plan_buckets(floats({10, 20, 5, 3}), options(64, 1, false));
  ASSERT_EQ(params_of(plan), (std::vector<std::vector<size_t>>{{3, 2, 1}, {0}}));
  EXPECT_EQ(plan.buckets[0].offsets, (std::vector<int64_t>{0, 16, 32}));
  EXPECT_EQ(plan.buckets[0].numel, 52);
  EXPECT_EQ(plan.buckets[0].padded_numel, 52);  // unsharded: no padding
  EXPECT_EQ(plan.buckets[1].offsets, (std::vector<int64_t>{0}));
  EXPECT_EQ(plan.buckets[1].numel, 10);
  EXPECT_EQ(plan.buckets[0].begin, 0);
  EXPECT_EQ(plan.buckets[1].begin, 52);
  EXPECT_EQ(plan.numel, 62);
}

// Cap 32 bytes over three parameters of 16 bytes: p2, p1 reach exactly 32, so
// p0 opens the next bucket. Sizes 1, 100, 100 under a cap of 16 bytes: p2
// (400 bytes) fills a bucket alone, and so does p1 after it.
TEST(BucketPlan, ABucketClosesOnceItHoldsTheCap) {
  EXPECT_EQ(params_of(plan_buckets(floats({4, 4, 4}), options(32, 1, false))),
            (std::vector<std::vector<size_t>>{{2, 1}, {0}}));
  EXPECT_EQ(params_of(plan_buckets(floats({1, 100, 100}), options(16, 1, false))),
            (std::vector<std::vector<size_t>>{{2}, {1}, {0}}));
  EXPECT_EQ(params_of(plan_buckets(floats({4, 4, 4}), options(1 << 20, 1, false))),
            (std::vector<std::vector<size_t>>{{2, 1, 0}}));
}

// Last first: float (p4), double (p3, p2), float on cuda:0 (p1), float on the
// CPU (p0): every change of dtype or device opens a bucket. The line is 16
// elements whatever the dtype: the second double starts at element 16.
TEST(BucketPlan, ADtypeOrDeviceChangeOpensABucket) {
  const std::vector<ParameterShape> params{{4, c10::kFloat, c10::kCPU},
                                           {4, c10::kFloat, c10::Device(c10::kCUDA, 0)},
                                           {4, c10::kDouble, c10::kCPU},
                                           {4, c10::kDouble, c10::kCPU},
                                           {4, c10::kFloat, c10::kCPU}};
  const auto plan = plan_buckets(params, options(1 << 20, 1, false));
  ASSERT_EQ(params_of(plan), (std::vector<std::vector<size_t>>{{4}, {3, 2}, {1}, {0}}));
  EXPECT_EQ(plan.buckets[1].offsets, (std::vector<int64_t>{0, 16}));
  EXPECT_EQ(plan.buckets[1].numel, 20);
}

// Sizes 6, 40, 7, last first: p2 at 0 (ends 7), p1 at 16 (ends 56), p0 at 64
// (ends 70). Sharded over 3 ranks the bucket is padded to a multiple of
// 3 × 16 = 48: 96, three shards of 32 elements (two whole lines each).
TEST(BucketPlan, ShardedBucketsSplitIntoEqualShardsOfWholeLines) {
  const auto plan = plan_buckets(floats({6, 40, 7}), options(1 << 20, 3, true));
  ASSERT_EQ(plan.buckets.size(), 1u);
  const auto& bucket = plan.buckets[0];
  EXPECT_EQ(bucket.params, (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(bucket.offsets, (std::vector<int64_t>{0, 16, 64}));
  EXPECT_EQ(bucket.numel, 70);
  EXPECT_EQ(bucket.padded_numel, 96);
  EXPECT_EQ(plan.numel, 96);
  EXPECT_EQ(shards_of(bucket), (Shards{{0, 32}, {32, 32}, {64, 32}}));
}

// The same bucket unsharded: not padded (70 elements), and each rank's share
// of the norm is [70 r / 3, 70 (r + 1) / 3): 0..23, 23..46, 46..70.
TEST(BucketPlan, UnshardedBucketsSplitTheirElementsForTheNorm) {
  const auto plan = plan_buckets(floats({6, 40, 7}), options(1 << 20, 3, false));
  ASSERT_EQ(plan.buckets.size(), 1u);
  EXPECT_EQ(plan.buckets[0].padded_numel, 70);
  EXPECT_EQ(shards_of(plan.buckets[0]), (Shards{{0, 23}, {23, 23}, {46, 24}}));
}

// Sharded over 2 ranks, cap 64 bytes: p1 (30 floats, 120 bytes) fills a
// bucket alone, padded to a multiple of 32: 32; p0 (20) likewise 32, placed
// after it. On one rank a sharded bucket is padded to a whole line only.
TEST(BucketPlan, ShardedBucketsLieEndToEnd) {
  const auto plan = plan_buckets(floats({20, 30}), options(64, 2, true));
  ASSERT_EQ(params_of(plan), (std::vector<std::vector<size_t>>{{1}, {0}}));
  EXPECT_EQ(plan.buckets[0].padded_numel, 32);
  EXPECT_EQ(plan.buckets[1].padded_numel, 32);
  EXPECT_EQ(plan.buckets[1].begin, 32);
  EXPECT_EQ(plan.numel, 64);
  EXPECT_EQ(shards_of(plan.buckets[0]), (Shards{{0, 16}, {16, 16}}));

  const auto one_rank = plan_buckets(floats({20, 30}), options(64, 1, true));
  ASSERT_EQ(one_rank.buckets.size(), 2u);
  EXPECT_EQ(one_rank.buckets[0].padded_numel, 32);  // 30 -> 32
  EXPECT_EQ(one_rank.buckets[1].padded_numel, 32);  // 20 -> 32
  EXPECT_EQ(shards_of(one_rank.buckets[1]), (Shards{{0, 32}}));
}

// The same three shards as parameter pieces (param, param_begin, shard_begin,
// numel): shard 0 = [0, 32) holds p2 whole ([0, 7) at 0) and p1's first 16
// elements ([16, 32) of the bucket, at 16 of the shard); shard 1 = [32, 64)
// the rest of p1 (its elements 16..40, bucket 32..56, at 0); shard 2 =
// [64, 96) p0 whole (bucket 64..70, at 0). The padding (7..16, 56..64,
// 70..96) belongs to none; each parameter's elements appear exactly once.
TEST(BucketPlan, ShardsSplitIntoParameterPieces) {
  const auto params = floats({6, 40, 7});
  const auto plan = plan_buckets(params, options(1 << 20, 3, true));
  const auto& bucket = plan.buckets.at(0);
  using Piece = std::tuple<size_t, int64_t, int64_t, int64_t>;
  const auto pieces = [&](int r) {
    std::vector<Piece> found;
    for (const auto& p : distributed::pieces_in(bucket, bucket.shards[r], params))
      found.emplace_back(p.param, p.param_begin, p.shard_begin, p.numel);
    return found;
  };
  EXPECT_EQ(pieces(0), (std::vector<Piece>{{2, 0, 0, 7}, {1, 0, 16, 16}}));
  EXPECT_EQ(pieces(1), (std::vector<Piece>{{1, 16, 0, 24}}));
  EXPECT_EQ(pieces(2), (std::vector<Piece>{{0, 0, 0, 6}}));
}

TEST(BucketPlan, NoParametersNoBuckets) {
  const auto plan = plan_buckets({}, options(64, 2, true));
  EXPECT_TRUE(plan.buckets.empty());
  EXPECT_EQ(plan.numel, 0);
}

}  // namespace
