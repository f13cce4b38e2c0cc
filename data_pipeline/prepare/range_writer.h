// What one rank writes of a split: its range of the examples encoded into
// shards named for the rank ("train.r0001-00000.h5"), and what cleaning kept
// and dropped; then every rank's, gathered on rank 0 in rank order, which
// names the shards for their place in the dataset (prepare.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data_pipeline/labels.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/prepare/tokenizers.h"
#include "data_pipeline/shard_format.h"
#include "launch/ranks.h"

namespace data {

// What one rank wrote of a split.
struct RangeWritten {
  std::vector<ShardEntry> shards;  // in example order, named for the rank
  CleaningReport cleaning;         // what cleaning kept and dropped of the range
};

// Encodes this rank's range of a split into shards of at most shard_size
// examples (and shard_mb MiB, when set); with `labels` (classification), tgt
// is the label's name. Rank 0 logs its progress.
RangeWritten write_range(const std::filesystem::path& dir, const std::string& split,
                         const PairSource& pairs, const Tokenizers& tokenizers,
                         const LabelSet& labels, const ShardAttrs& attrs,
                         const PrepareOptions& options, const launch::Ranks& ranks);

// Collective. What every rank wrote of a split, in rank order, on rank 0
// (empty elsewhere).
std::vector<RangeWritten> gather(const launch::Ranks& ranks, const RangeWritten& written);

}  // namespace data
