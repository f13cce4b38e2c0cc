// Bad input gets a clear error naming the file (and the example or line),
// and nothing half-written. Damaged shards are made with h5py, a writer
// nobody here wrote, from a dataset prepared by the real code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data_pipeline/dataset.h"
#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/split_index.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

class BadInput : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    data::PrepareOptions copy;
    copy.task = data::Task::kCopy;
    copy.out = dir_ / "data";
    copy.sizes = {{"train", 20}, {"valid", 0}, {"test", 0}};
    copy.shard_size = 10;  // two shards
    data::prepare_dataset(copy);
    shard_ = dir_ / "data" / "train-00001.h5";
  }

  // Runs a python snippet with h5py's File `f` open read-write on the shard.
  void h5py(const std::string& body) const {
    const auto result =
        test_util::run_command(test_paths::python() +
                               " -c 'import h5py, numpy as np\n"
                               "with h5py.File(\"" +
                               shard_.string() + "\", \"r+\") as f:\n" + body + "'");
    ASSERT_EQ(result.status, 0) << result.output;
  }

  fs::path shard_;
};

TEST_F(BadInput, TruncatedShard) {
  fs::resize_file(shard_, fs::file_size(shard_) / 2);
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }), {shard_.string()});
}

TEST_F(BadInput, WrongDtype) {
  h5py(
      "    t = f[\"src/tokens\"][:]\n    del f[\"src/tokens\"]\n"
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

// Offsets are read, and checked, when the split's index is written from the
// shards (prepare_data, --upgrade); training reads the index.
TEST_F(BadInput, OffsetsNotMonotone) {
  h5py("    o = f[\"src/offsets\"]\n    o[4], o[5] = o[5], o[4]");
  const data::Manifest manifest = data::read_manifest(dir_ / "data");
  expect_mentions(error_of([&] {
                    data::write_split_index(dir_ / "data", "train", manifest.splits.at("train"));
                  }),
                  {shard_.string(), "src/offsets decreases at example"});
}

TEST_F(BadInput, ShardListedButMissing) {
  fs::remove(shard_);
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {shard_.string(), "no such file"});
}

// A shard the manifest lists twice would be read twice: refused, naming the
// manifest, the second listing and the first.
TEST_F(BadInput, ShardListedTwice) {
  const fs::path manifest = dir_ / "data" / "manifest.json";
  const auto edit = test_util::run_command(
      test_paths::python() + " -c 'import json\np = \"" + manifest.string() +
      "\"\nm = json.load(open(p))\nm[\"splits\"][\"train\"][\"shards\"].append("
      "dict(m[\"splits\"][\"train\"][\"shards\"][0]))\njson.dump(m, open(p, \"w\"))'");
  ASSERT_EQ(edit.status, 0) << edit.output;
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {manifest.string(), "splits.train.shards[2].file", "train-00000.h5",
                   "splits.train.shards[0].file does too"});
}

// A tokenizer kind this build does not know is refused when the manifest
// is read, naming the manifest, the field and the kinds it knows.
TEST_F(BadInput, UnknownTokenizerKind) {
  const fs::path manifest = dir_ / "data" / "manifest.json";
  const auto edit =
      test_util::run_command(test_paths::python() + " -c 'import json\np = \"" + manifest.string() +
                             "\"\nm = json.load(open(p))\nm[\"tokenizer\"][\"kind\"] = \"bpe\"\n"
                             "json.dump(m, open(p, \"w\"))'");
  ASSERT_EQ(edit.status, 0) << edit.output;
  expect_mentions(error_of([&] { data::Dataset(dir_ / "data", "train"); }),
                  {manifest.string(), "tokenizer.kind", "'bpe'", "word, char or spm"});
}

// A vocabulary file cut short since prepare_data is refused when the
// tokenizer is loaded, naming the file and both sizes (it failed only when an
// id past its end was decoded).
TEST_F(BadInput, VocabularyShorterThanTheManifest) {
  const data::Manifest manifest = data::read_manifest(dir_ / "data");
  const fs::path vocab = dir_ / "data" / manifest.tgt_tokenizer_file;
  EXPECT_NO_THROW(data::load_dataset_tokenizer(manifest, dir_ / "data", "tgt"));
  const auto cut = test_util::run_command("sed -i '$d' " + vocab.string());
  ASSERT_EQ(cut.status, 0) << cut.output;
  expect_mentions(
      error_of([&] { data::load_dataset_tokenizer(manifest, dir_ / "data", "tgt"); }),
      {vocab.string(),
       "holds a vocabulary of " + std::to_string(manifest.tgt_vocab_size - 1) + " tokens",
       "tgt_vocab_size is " + std::to_string(manifest.tgt_vocab_size)});
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
  const std::string prepare = test_paths::bin_dir() + "/prepare_data --task text --out " +
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

  // gzip input is named as such (it failed as "line counts differ").
  ASSERT_EQ(test_util::run_command("gzip -k " + (dir_ / "tgt.txt").string()).status, 0);
  result = test_util::run_command(prepare + (dir_ / "tgt.txt.gz").string() + " --train-tgt " +
                                  (dir_ / "tgt.txt").string());
  EXPECT_NE(result.status, 0);
  expect_mentions(result.output, {(dir_ / "tgt.txt.gz").string() + " is gzip-compressed"});
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  for (const auto& entry : fs::directory_iterator(dir_))  // no temporary left either
    EXPECT_EQ(entry.path().filename().string().find("out.tmp"), std::string::npos) << entry.path();
}

// prepare_data --task classify: a line without a tab, an empty label,
// invalid UTF-8, a valid or test label the training split lacks, an empty
// valid or test text, a single training label. Each is named by file and
// line (or what is missing), exits non-zero and leaves nothing behind.
TEST_F(BadInput, PrepareRefusesBadTsvAndWritesNothing) {
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir_ / name, std::ios::binary) << content;
    return (dir_ / name).string();
  };
  const auto train = write("train.tsv", "pos\tgood film\nneg\tbad film\nneg\t \t\n");  // 3: dropped
  const std::string prepare =
      test_paths::bin_dir() + "/prepare_data --task classify --out " + (dir_ / "out").string();
  const struct {
    std::string options, file, content, mention;
  } cases[] = {
      {"--train-tsv", "notab.tsv", "pos\tok\nno tab here\n",
       ":2: no tab between the label and the text"},
      {"--valid-tsv", "nolabel.tsv", "\tjust text\n", ":1: empty label"},
      {"--test-tsv", "utf8.tsv", "pos\tgo\xffod\n", ":1: invalid UTF-8 at byte 6"},
      {"--test-tsv", "unknown.tsv", "pos\tok\nneg\tfine\nmeh\tso so\n",
       ":3: label 'meh' does not occur in the training split"},
      {"--valid-tsv", "empty.tsv", "pos\tok\nneg\t  \t\n", ":2: empty text"},
  };
  for (const auto& bad : cases) {
    const auto file = write(bad.file, bad.content);
    const std::string train_option = bad.options == "--train-tsv" ? "" : " --train-tsv " + train;
    const auto result =
        test_util::run_command(prepare + train_option + " " + bad.options + " " + file);
    EXPECT_EQ(result.status, 1) << result.output;
    expect_mentions(result.output, {file + bad.mention});
  }
  const auto result = test_util::run_command(prepare + " --train-tsv " +
                                             write("one.tsv", "pos\ta\nneg\t\npos\tb\n"));
  EXPECT_EQ(result.status, 1) << result.output;
  expect_mentions(result.output, {"the training split has 1 label(s)"});

  EXPECT_FALSE(fs::exists(dir_ / "out"));
  for (const auto& entry : fs::directory_iterator(dir_))  // no temporary left either
    EXPECT_EQ(entry.path().filename().string().find("out.tmp"), std::string::npos) << entry.path();
}

}  // namespace
