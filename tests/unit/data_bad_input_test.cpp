// Bad input gets a clear error naming the file (and the example or line),
// and nothing half-written. Damaged shards are made with h5py, a writer
// nobody here wrote, from a dataset prepared by the real code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data_pipeline/dataset.h"
#include "data_pipeline/prepare/prepare.h"
#include "tests/test_paths.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"

namespace {

namespace fs = std::filesystem;

class BadInput : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    data::PrepareOptions copy;
    copy.task = "copy";
    copy.out = dir_ / "data";
    copy.sizes = {{"train", 20}, {"valid", 0}, {"test", 0}};
    copy.shard_size = 10;  // two shards
    data::prepare_dataset(copy);
    shard_ = dir_ / "data" / "train-00001.h5";
  }

  // Runs a python snippet with h5py's File `f` open read-write on the shard.
  void h5py(const std::string& body) const {
    const auto result = test_util::run_command(
        std::string(test_paths::kPython) + " -c 'import h5py, numpy as np\n"
        "with h5py.File(\"" + shard_.string() + "\", \"r+\") as f:\n" + body + "'");
    ASSERT_EQ(result.status, 0) << result.output;
  }

  // The error of `action`, which must throw.
  template <typename Action>
  static std::string error_of(Action&& action) {
    try {
      action();
    } catch (const std::exception& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }

  static void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }

  fs::path shard_;
};

TEST_F(BadInput, TruncatedShard) {
  fs::resize_file(shard_, fs::file_size(shard_) / 2);
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }), {shard_.string()});
}

TEST_F(BadInput, WrongDtype) {
  h5py("    t = f[\"src/tokens\"][:]\n    del f[\"src/tokens\"]\n"
       "    f.create_dataset(\"src/tokens\", data=t.astype(np.int64))");
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {shard_.string(), "src/tokens", "64-bit", "expected 32-bit"});
}

TEST_F(BadInput, TokenIdOutsideTheVocabulary) {
  h5py("    f[\"tgt/tokens\"][f[\"tgt/offsets\"][3]] = f.attrs[\"tgt_vocab_size\"]");
  const data::Dataset train(dir_ / "data", "train");  // lazily: found when example 3 is read
  EXPECT_NO_THROW(train.get(10 + 2));
  expect_mentions(error_of([&] { train.get(10 + 3); }),
                  {shard_.string(), "tgt/tokens", "example 3", "outside the vocabulary"});
}

TEST_F(BadInput, OffsetsNotMonotone) {
  h5py("    o = f[\"src/offsets\"]\n    o[4], o[5] = o[5], o[4]");
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {shard_.string(), "src/offsets decreases at example"});
}

TEST_F(BadInput, ShardListedButMissing) {
  fs::remove(shard_);
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {shard_.string(), "no such file"});
}

TEST_F(BadInput, ChecksumMismatchFoundOnRequest) {
  h5py("    f[\"src/tokens\"][0] = (f[\"src/tokens\"][0] + 1) % f.attrs[\"src_vocab_size\"]");
  EXPECT_NO_THROW(data::Dataset(dir_ / "data", "train"));  // sizes still agree
  data::DatasetOptions verify;
  verify.verify_checksums = true;
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train", verify); }),
                  {shard_.string(), "sha256 differs from the manifest"});
}

// prepare_data: invalid UTF-8 and mismatched line counts name file and line,
// exit non-zero, and leave no output directory behind.
TEST_F(BadInput, PrepareRefusesBadTextAndWritesNothing) {
  std::ofstream(dir_ / "src.txt") << "ein Haus\nklein\xff Haus\n";
  std::ofstream(dir_ / "tgt.txt") << "a house\nsmall house\n";
  std::ofstream(dir_ / "short.txt") << "a house\n";
  const std::string prepare = std::string(test_paths::kBinDir) + "/prepare_data --task text --out " +
                              (dir_ / "out").string() + " --train-src ";
  auto result = test_util::run_command(prepare + (dir_ / "src.txt").string() + " --train-tgt " +
                                       (dir_ / "tgt.txt").string());
  EXPECT_NE(result.status, 0);
  expect_mentions(result.output, {(dir_ / "src.txt").string() + ":2: invalid UTF-8"});
  EXPECT_FALSE(fs::exists(dir_ / "out"));

  result = test_util::run_command(prepare + (dir_ / "tgt.txt").string() + " --train-tgt " +
                                  (dir_ / "short.txt").string());
  EXPECT_NE(result.status, 0);
  expect_mentions(result.output, {"line counts differ", "short.txt has 1"});
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  for (const auto& entry : fs::directory_iterator(dir_))  // no temporary left either
    EXPECT_EQ(entry.path().filename().string().find("out.tmp"), std::string::npos) << entry.path();
}

}  // namespace
