// data::content_sha256 names a dataset by what training reads: the same
// examples in other shards (another rank count, another deflate level, another
// command line) give the same value; one token, id, label, vocabulary byte or
// the place of a token between source and target gives another. (The value
// itself is checked against an independent Python reading of the shards in
// tests/data/prepare_parallel.sh.)
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/dataset_identity.h"
#include "data_pipeline/sha256.h"
#include "data_pipeline/shard_writer.h"

namespace {

namespace fs = std::filesystem;

struct Pair {
  int64_t id;
  std::vector<int32_t> src, tgt;
};

const std::vector<Pair> kExamples = {{0, {4, 5}, {6}}, {1, {}, {7, 8}}, {3, {9}, {4, 4}}};

class DatasetIdentity : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) / ("dataset_identity_test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The examples as a dataset of shards of these sizes; returns content_sha256.
  // With `labels` (one per example), a classification dataset of 2 classes.
  std::string prepared(const std::vector<Pair>& examples, const std::vector<size_t>& shard_sizes,
                       int deflate = 0, const std::string& vocab = "<pad>\n<s>\n</s>\n<unk>\n",
                       const std::vector<int64_t>& labels = {}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "vocab.txt") << vocab;
    data::Manifest manifest;
    manifest.tokenizer_kind = data::TokenizerKind::kWord;
    manifest.src_tokenizer_file = manifest.tgt_tokenizer_file = "vocab.txt";
    manifest.src_vocab_size = manifest.tgt_vocab_size = 10;
    manifest.prepare = {{"command", "shards of " + std::to_string(shard_sizes.size())}};
    const int64_t num_labels = labels.empty() ? 0 : 2;
    if (num_labels > 0) {
      manifest.task = data::kClassificationTask;
      manifest.num_labels = num_labels;
    }
    size_t next = 0;
    for (const size_t size : shard_sizes) {
      data::ShardData shard;
      for (size_t i = next; i < next + size; ++i) {
        shard.src.append(examples[i].src);
        shard.tgt.append(num_labels > 0 ? std::vector<int32_t>{} : examples[i].tgt);
        shard.ids.push_back(examples[i].id);
        if (num_labels > 0) shard.labels.push_back(labels[i]);
      }
      next += size;
      const std::string file = "train-" + std::to_string(manifest.splits["train"].shards.size());
      data::write_shard(dir_ / file, shard, {10, 10, manifest.special, num_labels}, {deflate});
      manifest.splits["train"].shards.push_back(
          {file, shard.size(), 0, 0, data::sha256_file(dir_ / file)});
    }
    return data::content_sha256(dir_, manifest);
  }

  fs::path dir_;
};

TEST_F(DatasetIdentity, ShardsRanksAndDeflateDoNotEnter) {
  const std::string one_shard = prepared(kExamples, {3});
  EXPECT_EQ(one_shard.size(), 64u);
  EXPECT_EQ(prepared(kExamples, {2, 1}), one_shard);
  EXPECT_EQ(prepared(kExamples, {1, 1, 1}, 6), one_shard);
}

TEST_F(DatasetIdentity, EveryPartOfAnExampleEnters) {
  const std::string original = prepared(kExamples, {3});
  std::vector<Pair> changed = kExamples;
  changed[2].tgt[1] = 5;  // one token
  EXPECT_NE(prepared(changed, {3}), original);
  changed = kExamples;
  changed[2].id = 2;  // one id
  EXPECT_NE(prepared(changed, {3}), original);
  changed = kExamples;
  changed[0] = {0, {4}, {5, 6}};  // a token moved from source to target
  EXPECT_NE(prepared(changed, {3}), original);
  changed = kExamples;
  std::swap(changed[0], changed[1]);  // the order
  EXPECT_NE(prepared(changed, {3}), original);
  EXPECT_NE(prepared(kExamples, {3}, 0, "<pad>\n<s>\n</s>\n<unk>\nx\n"), original);  // vocabulary
  const std::string vocab = "<pad>\n<s>\n</s>\n<unk>\n";
  const std::string classes = prepared(kExamples, {3}, 0, vocab, {0, 1, 0});
  EXPECT_EQ(prepared(kExamples, {1, 2}, 0, vocab, {0, 1, 0}), classes);
  EXPECT_NE(prepared(kExamples, {3}, 0, vocab, {0, 1, 1}), classes);  // one label
}

}  // namespace
