// A split opened by every rank of a job, its shards checked by one rank of
// each node (docs/cluster.md, "Large corpora"):
//
//   auto train = data::open_checked_on_each_node("data/wmt", "train", options, ranks, process);
//
// Checking a split opens every shard (its attributes against the manifest;
// with verify_checksums every byte): done by every rank, a job of 1 000
// ranks over 5 000 shards would make 5 million opens of the shared file
// system before its first step. Here the node's first rank (local rank 0)
// checks, the others open the split without checking (each then opens a
// shard only to read from it): 125 nodes x 5 000 opens. Each node checks its
// own view of the files, so one missing or damaged on one node only (a
// node-local copy, a stale cache) is found there; a failed check ends every
// rank alike, each naming the shard and the rank and node that found it.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "data_pipeline/dataset.h"
#include "launch/process.h"
#include "launch/ranks.h"

namespace data {

// Collective. Throws on every rank when any node's check failed.
std::unique_ptr<Dataset> open_checked_on_each_node(const std::filesystem::path& dir,
                                                   const std::string& split, DatasetOptions options,
                                                   const launch::Ranks& ranks,
                                                   const launch::ProcessInfo& process);

}  // namespace data
