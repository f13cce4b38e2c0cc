// Classification labels: the label file, the manifest's "labels" field and
// what Dataset checks and returns — a hand-built dataset (shard, manifest,
// labels.txt) read back, and each inconsistency refused by name.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data_pipeline/dataset.h"
#include "data_pipeline/labels.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/shard_writer.h"
#include "data_pipeline/split_index.h"
#include "tests/unit/error_message.h"
#include "tests/unit/temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test_util::error_of;
using test_util::expect_mentions;

class DataLabels : public test_util::TempDirTest {
 protected:
  // A classification dataset of 3 examples and 3 labels ("neg", "neu", "pos").
  void write_dataset() {
    data::ShardData shard;
    for (const auto& sentence : {std::vector<int32_t>{4, 5}, {6}, {5, 4, 6}}) {
      shard.src.append(sentence);
      shard.tgt.append({});
    }
    shard.ids = {0, 1, 2};
    shard.labels = {2, 0, 2};
    data::write_shard(dir_ / "train-00000.h5", shard, {7, 7, {}, 3});
    std::ofstream(dir_ / "labels.txt") << "neg\nneu\npos\n";

    manifest_.task = data::kClassificationTask;
    manifest_.tokenizer_kind = data::TokenizerKind::kWord;
    manifest_.src_tokenizer_file = manifest_.tgt_tokenizer_file = "vocab.txt";
    manifest_.src_vocab_size = manifest_.tgt_vocab_size = 7;
    manifest_.labels_file = "labels.txt";
    manifest_.num_labels = 3;
    manifest_.splits["train"].shards = {
        {"train-00000.h5", 3, 6, 0, data::sha256_file(dir_ / "train-00000.h5")}};
    manifest_.splits["train"].index =
        data::write_split_index(dir_, "train", manifest_.splits["train"]);
    data::write_manifest(dir_, manifest_);
  }

  json manifest_json() const { return json::parse(std::ifstream(dir_ / "manifest.json")); }
  void rewrite_manifest(const json& document) const {
    std::ofstream(dir_ / "manifest.json") << document.dump();
  }

  data::Manifest manifest_;
};

TEST_F(DataLabels, FileRoundTripIdsAndNames) {
  const data::LabelSet labels({"sport", "politik", "Wetter", "春"});
  labels.save(dir_ / "labels.txt");
  std::ifstream in(dir_ / "labels.txt", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "sport\npolitik\nWetter\n春\n");

  const auto loaded = data::LabelSet::load(dir_ / "labels.txt");
  EXPECT_EQ(loaded.size(), 4);
  EXPECT_EQ(loaded.id("politik"), 1);
  EXPECT_EQ(loaded.id("春"), 3);
  EXPECT_EQ(loaded.id("Sport"), -1);
  EXPECT_EQ(loaded.name(2), "Wetter");
  EXPECT_THROW(loaded.name(4), std::out_of_range);
}

TEST_F(DataLabels, BadLabelFilesAreNamed) {
  const auto file = dir_ / "labels.txt";
  std::ofstream(file) << "a\nb\na\n";
  expect_mentions(error_of([&] { data::LabelSet::load(file); }),
                  {file.string() + ": duplicate label 'a'"});
  std::ofstream(file) << "a\n\nb\n";
  expect_mentions(error_of([&] { data::LabelSet::load(file); }),
                  {file.string() + ":2: empty label"});
  expect_mentions(error_of([&] { data::LabelSet::load(dir_ / "none.txt"); }), {"none.txt"});
}

TEST_F(DataLabels, DatasetReturnsLabelsAndNames) {
  write_dataset();
  const auto manifest = data::read_manifest(dir_);
  EXPECT_TRUE(manifest.is_classification());
  EXPECT_EQ(manifest.labels_file, "labels.txt");
  EXPECT_EQ(manifest.num_labels, 3);
  EXPECT_EQ(manifest_json()["labels"], (json{{"file", "labels.txt"}, {"count", 3}}));

  const data::Dataset train(dir_, "train");
  ASSERT_EQ(train.size(), 3);
  EXPECT_EQ(train.labels().size(), 3);
  const std::vector<std::string> expected = {"pos", "neg", "pos"};
  for (int64_t i = 0; i < 3; ++i) {
    const auto example = train.get(i);
    EXPECT_TRUE(example.tgt.empty());
    EXPECT_EQ(train.labels().name(example.label), expected[i]);
  }
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(train.lengths().at(i).tgt, 0);
}

TEST_F(DataLabels, ManifestFieldsAreValidated) {
  write_dataset();
  const auto manifest_file = (dir_ / "manifest.json").string();
  auto document = manifest_json();
  const auto expect_refused = [&](const json& changed, const std::string& field) {
    rewrite_manifest(changed);
    expect_mentions(error_of([&] { data::read_manifest(dir_); }),
                    {manifest_file, "field '" + field + "'"});
  };
  auto changed = document;
  changed.erase("labels");
  expect_refused(changed, "labels");
  changed = document;
  changed["labels"].erase("count");
  expect_refused(changed, "labels.count");
  changed["labels"]["count"] = 1;
  expect_refused(changed, "labels.count");
  changed = document;
  changed["labels"]["file"] = 3;
  expect_refused(changed, "labels.file");
  changed = document;
  changed["task"] = "seq2seq";  // a seq2seq dataset has no labels
  expect_refused(changed, "labels");
  changed["task"] = "tagging";
  expect_refused(changed, "task");
}

TEST_F(DataLabels, DatasetRefusesLabelFileOrShardDisagreeingWithManifest) {
  write_dataset();
  std::ofstream(dir_ / "labels.txt") << "neg\npos\n";
  expect_mentions(
      error_of([&] { data::Dataset(dir_, "train"); }),
      {(dir_ / "labels.txt").string() + " has 2 labels, the manifest's labels.count is 3"});

  std::ofstream(dir_ / "labels.txt") << "neg\nneu\npos\nother\n";
  auto document = manifest_json();
  document["labels"]["count"] = 4;  // the shard says 3
  rewrite_manifest(document);
  expect_mentions(
      error_of([&] { data::Dataset(dir_, "train"); }),
      {(dir_ / "train-00000.h5").string(), "num_labels 3 differs from the manifest's 4"});
}

}  // namespace
