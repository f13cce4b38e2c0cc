// Shard integrity: every chunk of a shard carries a Fletcher-32 checksum and
// its metadata is checksummed, so damage on disk is an error naming the
// shard, the dataset in it and the examples, never garbage read as data.
// Shards are damaged as bit rot or a cut copy would: a byte flipped at a
// position h5py reports (the chunk holding an element, an object header),
// or the file cut short. Old shards (format version 1, rewritten by h5py,
// tests/data/write_v1_shards.py) still read.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/dataset.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/prepare/upgrade.h"
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

// Where to damage a dataset, as h5py sees the file: "element N" is the byte
// of element N on disk (the middle of its chunk when the chunk is
// compressed); "header" the middle of the dataset's object header.
constexpr char kLocate[] = R"(
import sys, h5py
path, name, where = sys.argv[1:4]
with h5py.File(path, "r") as f:
    d = f[name]
    if where == "header":
        info = h5py.h5o.get_info(d.id)
        print(info.addr + info.hdr.space.total // 2)
    else:
        element, chunk = int(where), d.chunks[0]
        stored = d.id.get_chunk_info_by_coord((element // chunk * chunk,))
        inside = stored.size // 2 if d.compression else (element % chunk) * d.dtype.itemsize
        print(stored.byte_offset + inside)
)";

class Integrity : public test_util::TempDirTest {
 protected:
  // A copy-task dataset of 40 training examples in one shard, in chunks of
  // 16 elements (several per dataset), deflated at `deflate`.
  void prepare(int deflate) {
    data::PrepareOptions copy;
    copy.task = data::Task::kCopy;
    copy.out = dir_ / "data";
    copy.sizes = {{"train", 40}, {"valid", 0}, {"test", 0}};
    copy.shard_size = 40;
    copy.shard = {deflate, 16};
    data::prepare_dataset(copy);
    shard_ = dir_ / "data" / "train-00000.h5";
    std::ofstream(dir_ / "locate.py") << kLocate;
  }

  std::string python(const std::string& arguments) const {
    const auto result = test_util::run_command(test_paths::python() + " " + arguments);
    EXPECT_EQ(result.status, 0) << result.output;
    return result.output;
  }

  // Flips every bit of the byte at `where` (see kLocate) in dataset `name`.
  void damage(const std::string& name, const std::string& where) const {
    const auto offset = std::stoll(
        python((dir_ / "locate.py").string() + " " + shard_.string() + " " + name + " " + where));
    std::fstream file(shard_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(offset);
    const char byte = static_cast<char>(file.get());
    file.seekp(offset);
    file.put(static_cast<char>(~byte));
    ASSERT_TRUE(file.flush()) << shard_;
  }

  // Where example i's target tokens begin, as h5py reads the offsets (the
  // reader's own index is under test).
  int64_t tgt_offset(int64_t i) const {
    return std::stoll(python("-c 'import h5py; print(h5py.File(\"" + shard_.string() +
                             "\", \"r\")[\"tgt/offsets\"][" + std::to_string(i) + "])'"));
  }

  fs::path shard_;
};

TEST_F(Integrity, DamagedTokenChunkNamesShardDatasetAndExample) {
  prepare(0);
  const int64_t first = tgt_offset(30);  // example 30's first token
  const int64_t chunk_begin = first / 16 * 16;
  damage("tgt/tokens", std::to_string(first));
  const data::Dataset train(dir_ / "data", "train");  // offsets and ids are intact
  for (int64_t i = 0; i < train.size(); ++i) {
    // Examples with target tokens in the damaged chunk fail; the others read.
    const int64_t begin = tgt_offset(i), end = begin + train.lengths().at(i).tgt;
    if (end <= chunk_begin || begin >= chunk_begin + 16) {
      EXPECT_NO_THROW(train.get(i)) << "example " << i;
    } else {
      expect_mentions(error_of([&] { train.get(i); }),
                      {"shard " + shard_.string(), "example " + std::to_string(i) + " (id ",
                       "dataset tgt/tokens", "Fletcher-32 checksum"});
    }
  }
  // Reading the whole shard names the damaged chunk's elements.
  expect_mentions(error_of([&] { data::ShardReader(shard_).read(); }),
                  {shard_.string(),
                   "dataset tgt/tokens, elements [" + std::to_string(chunk_begin) + ", " +
                       std::to_string(chunk_begin + 16) + ")",
                   "Fletcher-32 checksum", "examples "});
}

TEST_F(Integrity, DamagedCompressedChunkFailsItsChecksum) {
  prepare(6);
  damage("src/tokens", std::to_string(tgt_offset(5)));  // copy task: src = tgt
  const data::Dataset train(dir_ / "data", "train");
  expect_mentions(error_of([&] { train.get(5); }), {"shard " + shard_.string(), "example 5 (id 5)",
                                                    "dataset src/tokens", "Fletcher-32 checksum"});
}

// The index arrays are read when a split index is written from the shards
// (prepare_data, --upgrade): entries 16..31 of the offsets bound examples
// 15..31; entries 16..31 of ids are examples 16..31.
TEST_F(Integrity, DamagedOffsetsOrIdsNameTheirExamples) {
  prepare(0);
  const data::Manifest manifest = data::read_manifest(dir_ / "data");
  const auto index = [&] {
    data::write_split_index(dir_ / "data", "train", manifest.splits.at("train"));
  };
  damage("src/offsets", "20");
  expect_mentions(error_of(index),
                  {"shard " + shard_.string(), "dataset src/offsets, elements [16, 32)",
                   "Fletcher-32 checksum", "(examples 15 to 31)"});
  damage("src/offsets", "20");  // repaired
  EXPECT_NO_THROW(index());
  damage("ids", "39");
  expect_mentions(error_of(index), {"shard " + shard_.string(), "dataset ids, elements [32, 40)",
                                    "Fletcher-32 checksum", "(examples 32 to 39)"});
}

TEST_F(Integrity, DamagedObjectHeaderFailsItsChecksum) {
  prepare(0);
  damage("tgt/tokens", "header");
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {"shard " + shard_.string(), "dataset tgt/tokens", "metadata checksum"});
}

TEST_F(Integrity, TruncatedShardIsNamedAsTruncated) {
  prepare(0);
  fs::resize_file(shard_, fs::file_size(shard_) - 100);
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {"shard " + shard_.string(), "the file is truncated"});
}

// Shards written before checksums (format version 1) read as before, the
// same examples; a version 2 shard without checksums is refused.
TEST_F(Integrity, OldShardsStillRead) {
  prepare(4);
  std::vector<data::Example> examples;
  {
    const data::Dataset train(dir_ / "data", "train");
    for (int64_t i = 0; i < train.size(); ++i) examples.push_back(train.get(i));
  }
  const std::string rewrite =
      test_paths::source_dir() + "/tests/data/write_v1_shards.py " + (dir_ / "data").string();
  python(rewrite);
  EXPECT_EQ(python("-c 'import h5py; f = h5py.File(\"" + shard_.string() +
                   "\", \"r\"); print(f.attrs[\"format_version\"], f[\"src/tokens\"].fletcher32, "
                   "f[\"src/offsets\"].chunks)'"),
            "1 False None\n");
  EXPECT_EQ(data::ShardReader(shard_).format_version(), 1);
  EXPECT_EQ(data::upgrade_dataset(dir_ / "data"), std::vector<std::string>{"train"});
  {
    data::DatasetOptions verify;
    verify.verify_checksums = true;  // the rewritten manifest's sha256 too
    const data::Dataset train(dir_ / "data", "train", verify);
    ASSERT_EQ(train.size(), static_cast<int64_t>(examples.size()));
    for (int64_t i = 0; i < train.size(); ++i) {
      const auto example = train.get(i);
      EXPECT_EQ(example.id, examples[i].id);
      EXPECT_EQ(example.src, examples[i].src);
      EXPECT_EQ(example.tgt, examples[i].tgt);
    }
  }  // closed: h5py may write

  python("-c 'import h5py; h5py.File(\"" + shard_.string() +
         "\", \"r+\").attrs[\"format_version\"] = 2'");
  expect_mentions(error_of([&] { data::ShardReader reader(shard_); }),
                  {shard_.string(), "dataset src/tokens has no Fletcher-32 checksums",
                   "format_version 2 requires"});
}

}  // namespace
