// The split index: what prepare_data writes is what split_index.h documents
// (read by numpy against the shards read by h5py); a Dataset reads its
// examples and lengths through it; a dataset without one is refused naming
// the command that adds it, and that command adds it without changing the
// dataset; an index that disagrees with the manifest is refused naming it,
// a damaged record names its example, and the same command rebuilds it.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/node_check.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/prepare/upgrade.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/shard_reader.h"
#include "data_pipeline/split_index.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

// The format as split_index.h writes it down, read with numpy; the shards
// with h5py; prints "ok" when every record matches its shard.
constexpr char kCheck[] = R"(
import json, sys, zlib, h5py, numpy as np
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
for split, entry in m["splits"].items():
    raw = open(d + "/" + entry["index"]["file"], "rb").read()
    assert raw[:16] == b"transformer-idx\0", raw[:16]
    version, n, shards = np.frombuffer(raw[16:40], "<i8")
    assert version == 2 and shards == len(entry["shards"]), (version, shards)
    assert raw[40:104].rstrip(b"\0").decode() == split and raw[104:128] == bytes(24), raw[40:128]
    begin = np.frombuffer(raw[128:128 + 8 * (shards + 1)], "<i8")
    at = 128 + 8 * (shards + 1)
    for k, shard in enumerate(entry["shards"]):
        assert raw[at + 32 * k:at + 32 * (k + 1)].hex() == shard["sha256"], (split, k)
    at += 32 * shards
    lengths = np.frombuffer(raw[at:at + 8 * n], np.dtype([("src", "<i4"), ("tgt", "<i4")]))
    at += 8 * n
    where = np.frombuffer(raw[at:], np.dtype([("src_offset", "<i8"), ("tgt_offset", "<i8"),
        ("id", "<i8"), ("label", "<i8"), ("src_length", "<i4"), ("tgt_length", "<i4"),
        ("crc32", "<u4"), ("zero", "<i4")]))
    assert len(where) == n, (len(where), n)
    for i in range(n):
        record = raw[at + 48 * i:at + 48 * (i + 1)]
        assert where["crc32"][i] == zlib.crc32(record[:40]) and where["zero"][i] == 0, (split, i)
    for k, shard in enumerate(entry["shards"]):
        with h5py.File(d + "/" + shard["file"], "r") as f:
            rows = slice(begin[k], begin[k + 1])
            for side in ("src", "tgt"):
                o = f[side + "/offsets"][:]
                assert (where[side + "_offset"][rows] == o[:-1]).all(), (split, k, side)
                assert (where[side + "_length"][rows] == np.diff(o)).all(), (split, k, side)
                assert (lengths[side][rows] == np.diff(o)).all(), (split, k, side)
            assert (where["id"][rows] == f["ids"][:]).all(), (split, k)
            labels = f["labels"][:] if "labels" in f else -np.ones(begin[k + 1] - begin[k])
            assert (where["label"][rows] == labels).all(), (split, k)
print("ok")
)";

class SplitIndexTest : public test_util::TempDirTest {
 protected:
  // A copy-task dataset (or majority: classification) in shards of 7 examples.
  // With `test` examples of a test split, from `seed`, into `name`.
  fs::path prepare(data::Task task = data::Task::kCopy, int64_t test = 0, int64_t seed = 1,
                   const std::string& name = "data") {
    data::PrepareOptions options;
    options.task = task;
    options.out = dir_ / name;
    options.seed = seed;
    options.sizes = {{"train", 60}, {"valid", 9}, {"test", test}};
    options.shard_size = 7;
    data::prepare_dataset(options);
    return options.out;
  }

  static nlohmann::json manifest_json(const fs::path& data) {
    return nlohmann::json::parse(std::ifstream(data / "manifest.json"));
  }
  static void write_json(const fs::path& data, const nlohmann::json& document) {
    std::ofstream(data / "manifest.json") << document.dump(2);
  }
};

TEST_F(SplitIndexTest, RecordsWhatTheShardsHoldAsDocumented) {
  for (const auto task : {data::Task::kCopy, data::Task::kMajority}) {
    const fs::path data = prepare(task);
    const auto result =
        test_util::run_command(test_paths::python() + " -c '" + kCheck + "' " + data.string());
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_NE(result.output.find("ok"), std::string::npos) << result.output;
    fs::remove_all(data);
  }
}

TEST_F(SplitIndexTest, DatasetReadsExamplesAndLengthsThroughIt) {
  const fs::path data = prepare();
  const data::Manifest manifest = data::read_manifest(data);
  const data::Dataset train(data, "train");
  ASSERT_EQ(train.size(), 60);
  int64_t i = 0;
  for (const auto& shard : manifest.splits.at("train").shards) {  // 9 shards: 8 × 7 + 4
    const data::ShardData all = data::ShardReader(data / shard.file).read();
    for (int64_t k = 0; k < all.size(); ++k, ++i) {
      const data::Example example = train.get(i);
      EXPECT_EQ(example.id, all.ids[k]);
      EXPECT_EQ(example.src, all.src.at(k));
      EXPECT_EQ(example.tgt, all.tgt.at(k));
      EXPECT_EQ(train.lengths().at(i).src, all.src.length(k));
      EXPECT_EQ(train.lengths().at(i).tgt, all.tgt.length(k));
    }
  }
  EXPECT_EQ(i, 60);
  std::vector<data::Lengths> chunk(20);
  train.lengths().read(33, chunk);
  for (int64_t k = 0; k < 20; ++k) EXPECT_EQ(chunk[k].tgt, train.lengths().at(33 + k).tgt);
  EXPECT_THROW(train.lengths().at(60), std::out_of_range);
}

// Opened without the shard check (a job's ranks but one per node,
// node_check.h), a split opens no shard until it reads from one: a shard
// missing is not noticed at opening, examples of the others read, and
// check_shards() names it.
TEST_F(SplitIndexTest, WithoutTheShardCheckOnlyTheShardsReadAreOpened) {
  const fs::path data = prepare();
  const data::Manifest manifest = data::read_manifest(data);
  const fs::path missing = data / manifest.splits.at("train").shards.at(1).file;  // examples 7-13
  fs::remove(missing);
  EXPECT_NE(error_of([&] { data::Dataset(data, "train"); }).find(missing.string()),
            std::string::npos);
  data::DatasetOptions unchecked;
  unchecked.check_shards = false;
  const data::Dataset train(data, "train", unchecked);
  EXPECT_EQ(
      train.get(0).id,
      data::ShardReader(data / manifest.splits.at("train").shards.at(0).file).read().ids.at(0));
  expect_mentions(error_of([&] { train.get(7); }), {missing.string()});
  expect_mentions(error_of([&] { train.check_shards(); }), {missing.string(), "no such file"});
}

// A job's ranks open a split with open_checked_on_each_node: the node's first
// rank (local rank 0) checks the shards, the others do not.
TEST_F(SplitIndexTest, OnEachNodeItsFirstRankChecksTheShards) {
  const fs::path data = prepare();
  const fs::path missing = data / data::read_manifest(data).splits.at("train").shards.at(1).file;
  fs::remove(missing);
  const launch::Ranks one;  // no MPI: one process
  launch::ProcessInfo process;
  process.local_rank = 1;
  EXPECT_EQ(data::open_checked_on_each_node(data, "train", {}, one, process)->size(), 60);
  process.local_rank = 0;
  expect_mentions(
      error_of([&] { data::open_checked_on_each_node(data, "train", {}, one, process); }),
      {missing.string(), "no such file"});
}

// The batcher plans from the index on disk what it plans from the same
// lengths in memory.
TEST_F(SplitIndexTest, BatchesFromTheIndexEqualBatchesFromMemory) {
  const fs::path data = prepare();
  const data::Dataset train(data, "train");
  data::ExampleLengths in_memory;
  for (int64_t i = 0; i < train.size(); ++i) {
    in_memory.src.push_back(static_cast<int64_t>(train.get(i).src.size()));
    in_memory.tgt.push_back(static_cast<int64_t>(train.get(i).tgt.size()));
  }
  data::BatcherOptions options;
  options.batch_tokens = 60;
  options.max_len = 10;
  options.sort_window = 2;
  const data::Batcher from_disk(train.lengths(), options), from_memory(in_memory, options);
  EXPECT_EQ(from_disk.num_windows(), from_memory.num_windows());
  EXPECT_GT(from_disk.num_windows(), 1);
  for (int64_t epoch : {0, 1}) EXPECT_EQ(from_disk.epoch(epoch), from_memory.epoch(epoch));
}

TEST_F(SplitIndexTest, ADatasetWithoutItNamesTheUpgradeWhichChangesNothingElse) {
  const fs::path data = prepare();
  std::vector<data::Example> before;
  {
    const data::Dataset train(data, "train");
    for (int64_t i = 0; i < train.size(); ++i) before.push_back(train.get(i));
  }
  auto document = manifest_json(data);  // as an earlier prepare_data wrote it
  for (auto& [split, entry] : document["splits"].items()) {
    fs::remove(data / entry["index"]["file"].get<std::string>());
    entry.erase("index");
  }
  write_json(data, document);
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {data.string(), "'train'", "prepare_data --upgrade " + data.string()});

  EXPECT_EQ(data::upgrade_dataset(data), (std::vector<std::string>{"train", "valid"}));
  EXPECT_TRUE(data::upgrade_dataset(data).empty());  // up to date
  const auto upgraded = manifest_json(data);
  for (const auto* key : {"content_sha256", "prepare"}) EXPECT_EQ(upgraded[key], document[key]);
  EXPECT_EQ(upgraded["splits"]["train"]["shards"], document["splits"]["train"]["shards"]);
  const data::Dataset train(data, "train", {/*verify_checksums=*/true});
  ASSERT_EQ(train.size(), static_cast<int64_t>(before.size()));
  for (int64_t i = 0; i < train.size(); ++i) {
    EXPECT_EQ(train.get(i).src, before[i].src);
    EXPECT_EQ(train.get(i).id, before[i].id);
  }
}

// A dataset prepared before content_sha256 is named by its manifest's
// sha256, which the upgrade rewrites: its runs must still name it.
TEST_F(SplitIndexTest, TheUpgradeKeepsAnOlderDatasetsIdentity) {
  const fs::path data = prepare();
  auto document = manifest_json(data);
  document.erase("content_sha256");
  for (auto& [split, entry] : document["splits"].items()) entry.erase("index");
  write_json(data, document);
  const std::string before = data::dataset_id(data);
  EXPECT_EQ(before, data::sha256_file(data / "manifest.json"));
  ASSERT_EQ(data::upgrade_dataset(data).size(), 2u);
  EXPECT_NE(data::sha256_file(data / "manifest.json"), before);
  EXPECT_EQ(data::dataset_id(data), before);
  EXPECT_TRUE(data::names_manifest(data, before));
  EXPECT_FALSE(data::names_manifest(data, "another"));
  EXPECT_FALSE(data::names_manifest(data, ""));
}

TEST_F(SplitIndexTest, OneThatDisagreesWithTheManifestIsRefusedByName) {
  const fs::path data = prepare();
  const fs::path index = data / data::split_index_file_name("train");
  const auto size = fs::file_size(index);

  fs::resize_file(index, size - 8);  // cut short
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {"split index " + index.string(), "bytes, expected"});
  fs::resize_file(index, size);  // the right size again, its last record zeros
  expect_mentions(error_of([&] { data::Dataset(data, "train", {true}); }),
                  {index.string(), "sha256 differs"});

  auto document = manifest_json(data);  // the manifest lists one shard fewer
  auto& shards = document["splits"]["train"]["shards"];
  shards.erase(shards.size() - 1);
  write_json(data, document);
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {index.string(), "60 examples in 9 shards, the manifest says 56 in 8"});

  for (const auto& [version, said] :
       std::vector<std::pair<int64_t, std::vector<std::string>>>{
           {1, {"format_version 1 (an earlier prepare_data's", "prepare_data --upgrade"}},
           {3, {"format_version 3 (a later prepare_data's); this build reads 2"}}}) {
    std::fstream file(index, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(16);
    file.write(reinterpret_cast<const char*>(&version), sizeof(version));
    file.close();
    auto words = said;
    words.push_back(index.string());
    expect_mentions(error_of([&] { data::Dataset(data, "train"); }), words);
  }

  std::fstream(index, std::ios::in | std::ios::out | std::ios::binary) << "not-an-index";
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {index.string(), "not a split index"});
}

// An index proves at every open that it is its split's and its dataset's:
// valid.index and test.index exchanged, a train.index of another dataset of
// the same size, and a shard of another dataset added to the manifest by
// hand are refused naming the split, the dataset or the shard (before
// format_version 2 the first two were read through without a word); the
// upgrade rebuilds the first two and refuses the third.
TEST_F(SplitIndexTest, OneOfAnotherSplitOrDatasetIsRefusedNamingWhich) {
  const fs::path data = prepare(data::Task::kCopy, 9);
  const fs::path other = prepare(data::Task::kCopy, 9, 2, "other");
  const fs::path valid = data / "valid.index", test = data / "test.index";
  fs::rename(valid, data / "exchanged");
  fs::rename(test, valid);
  fs::rename(data / "exchanged", test);
  expect_mentions(error_of([&] { data::Dataset(data, "valid"); }),
                  {valid.string(), "an index of the 'test' split, not of 'valid'",
                   "prepare_data --upgrade " + data.string()});
  EXPECT_EQ(data::upgrade_dataset(data), (std::vector<std::string>{"test", "valid"}));
  EXPECT_EQ(data::Dataset(data, "valid", {true}).size(), 9);

  const fs::path train = data / "train.index";
  fs::copy_file(other / "train.index", train, fs::copy_options::overwrite_existing);
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {train.string(), "none of the manifest's 9 shards", "another dataset",
                   "prepare_data --upgrade " + data.string()});
  EXPECT_EQ(data::upgrade_dataset(data), std::vector<std::string>{"train"});
  EXPECT_EQ(data::Dataset(data, "train", {true}).size(), 60);

  fs::copy_file(other / "train-00008.h5", data / "train-00009.h5");
  auto document = manifest_json(data);
  auto shard = manifest_json(other)["splits"]["train"]["shards"][8];
  shard["file"] = "train-00009.h5";
  document["splits"]["train"]["shards"].push_back(shard);
  write_json(data, document);
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {train.string(), "shard train-00009.h5", "not one this index was built from",
                   "by hand"});
  // The upgrade does not rebuild over it: the dataset's content_sha256 would no longer say what it holds.
  expect_mentions(error_of([&] { data::upgrade_dataset(data); }),
                  {"shard train-00009.h5", "not one this index was built from"});
}

TEST_F(SplitIndexTest, ADamagedRecordNamesItsExampleAndTheUpgradeRebuildsIt) {
  const fs::path data = prepare();
  const fs::path index = data / data::split_index_file_name("train");
  const auto size = static_cast<int64_t>(fs::file_size(index));
  const int64_t record_17 = size - 48 * (60 - 17);  // the locations end the file
  {
    std::fstream file(index, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(record_17 + 2);  // a bit of example 17's source offset
    file.put(static_cast<char>(0x40));
  }
  {
    std::fstream file(index, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(128 + 8 * (9 + 1) + 32 * 9 + 8 * 5);  // example 5's source length (9 shards)
    file.put(static_cast<char>(0x7F));
  }
  const data::Dataset train(data, "train");
  EXPECT_NO_THROW(train.get(16));
  expect_mentions(error_of([&] { train.get(17); }), {index.string(), "example 17", "CRC-32",
                                                     "prepare_data --upgrade " + data.string()});
  EXPECT_EQ(train.lengths().at(5).src, 0x7F);  // what batching would see
  expect_mentions(error_of([&] { train.get(5); }),
                  {index.string(), "example 5's lengths differ", "prepare_data --upgrade"});
  EXPECT_EQ(data::upgrade_dataset(data), std::vector<std::string>{"train"});
  const data::Dataset repaired(data, "train", {true});
  EXPECT_EQ(repaired.get(17).id, 17);
  EXPECT_EQ(repaired.lengths().at(5).src, static_cast<int64_t>(repaired.get(5).src.size()));
  // A missing index names its remedy too, and the remedy rebuilds it.
  fs::remove(index);
  expect_mentions(error_of([&] { data::Dataset(data, "train"); }),
                  {index.string(), "No such file", "prepare_data --upgrade " + data.string()});
  EXPECT_EQ(data::upgrade_dataset(data), std::vector<std::string>{"train"});
  EXPECT_EQ(data::Dataset(data, "train", {true}).get(17).id, 17);
}

}  // namespace
