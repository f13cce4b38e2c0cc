// Where GradSync keeps each parameter's gradient: which flat bucket, at what
// offset, and which part of each bucket is whose. A pure function of the
// parameters' sizes, like PyTorch's compute_bucket_assignment_by_size, so
// that it is tested without ranks (docs/DESIGN.md, "Gradient buckets and the
// NCCL communicator").
//
//   parameters, last first:  p5 p4 p3 | p2 p1 | p0   (a bucket closes at bucket_bytes,
//                                                      or where dtype or device changes)
//   one bucket (elements):   [p5 . . | p4 . | p3 . . . | padding]
//                             ^0       ^16    ^32        each offset a multiple of the line
//   sharded, 2 ranks:        [ shard 0        | shard 1         ]  equal, of whole lines
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace distributed {

// What the plan needs to know of a parameter.
struct ParameterShape {
  int64_t numel = 0;
  c10::ScalarType dtype = c10::kFloat;
  c10::Device device = c10::kCPU;
};

struct BucketPlanOptions {
  int64_t bucket_bytes = 25 << 20;  // a bucket closes once its parameters hold this many bytes
  int64_t line = 16;                // elements: every parameter starts at a multiple of it
  int64_t world_size = 1;
  bool sharded = false;  // each bucket padded to world_size equal shards of whole lines
};

// Elements [begin, begin + numel) of a flat tensor.
struct Range {
  int64_t begin = 0;
  int64_t numel = 0;
};

struct PlannedBucket {
  std::vector<size_t> params;    // indices into the parameter list, in the bucket's order
  std::vector<int64_t> offsets;  // each parameter's first element: a multiple of the line
  int64_t numel = 0;             // up to the last parameter's end
  int64_t padded_numel = 0;      // sharded: numel rounded up to world_size shards of lines
  int64_t begin = 0;             // in all buckets laid end to end, each padded
  // [world_size] rank r's shard, the gradients whose norm it takes: sharded,
  // the r-th equal part of padded_numel (which r also sums and updates);
  // else numel split as evenly as whole elements allow.
  std::vector<Range> shards;
};

struct BucketPlan {
  std::vector<PlannedBucket> buckets;  // in launch order
  int64_t numel = 0;                   // of all buckets, padded
};

BucketPlan plan_buckets(const std::vector<ParameterShape>& params,
                        const BucketPlanOptions& options);

// Part of a parameter inside a shard: the flattened parameter's elements
// [param_begin, param_begin + numel) lie at [shard_begin, shard_begin + numel)
// of the shard. What a rank's checkpoint part names (checkpoint/optimizer_state.h).
struct ShardPiece {
  size_t param = 0;  // index into the parameter list
  int64_t param_begin = 0;
  int64_t shard_begin = 0;
  int64_t numel = 0;
};

// The pieces of `bucket`'s parameters inside `shard` (one of bucket.shards),
// in the bucket's order; padding belongs to none.
std::vector<ShardPiece> pieces_in(const PlannedBucket& bucket, const Range& shard,
                                  const std::vector<ParameterShape>& params);

}  // namespace distributed
