// prepare_data end to end, running the real program: the datasets it writes
// (seq2seq and classification) read back through Dataset, and h5py sees in
// its shards exactly what the C++ reader returns. The reader's errors name the missing dir, split,
// shard or manifest field. (Bad command lines and input files: data_cli_test.)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data_pipeline/dataset.h"
#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/shard_reader.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Result = test_util::CommandResult;
using test_util::run_command;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class DataPrepare : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    out_ = dir_ / "dataset";
  }

  static Result prepare(const std::string& arguments) {
    return run_command(test_paths::bin_dir() + "/prepare_data " + arguments);
  }

  std::string text_file(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name, std::ios::binary) << content;
    return (dir_ / name).string();
  }

  fs::path out_;
};

TEST_F(DataPrepare, SyntheticReverseReadsBack) {
  const auto result =
      prepare("--task reverse --out " + out_.string() +
              " --train-size 50 --valid-size 7 --test-size 0 --shard-size 20 --symbols 6");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "50 examples")) << result.output;

  const auto manifest = data::read_manifest(out_);
  ASSERT_EQ(manifest.splits.size(), 2u);                     // a split of size 0 is left out
  ASSERT_EQ(manifest.splits.at("train").shards.size(), 3u);  // 20 + 20 + 10
  EXPECT_EQ(manifest.splits.at("train").shards[2].num_examples, 10);
  EXPECT_EQ(manifest.src_vocab_size, 4 + 6);
  std::string hashes;  // what sha256sum prints for the shards, in manifest order
  std::string files;
  for (const auto& shard : manifest.splits.at("train").shards) {
    hashes += shard.sha256 + "  " + (out_ / shard.file).string() + "\n";
    files += " " + (out_ / shard.file).string();
  }
  EXPECT_EQ(run_command("sha256sum" + files).output, hashes);

  const data::Dataset train(out_, "train");
  ASSERT_EQ(train.size(), 50);
  const auto words =
      data::load_tokenizer(manifest.tokenizer_kind, out_ / manifest.tgt_tokenizer_file);
  for (int64_t i = 0; i < train.size(); ++i) {
    const auto example = train.get(i);
    EXPECT_EQ(example.id, i);
    EXPECT_EQ(static_cast<int64_t>(example.src.size()), train.lengths().at(i).src);
    auto reversed = example.src;
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_EQ(example.tgt, reversed);
    EXPECT_EQ(words->decode(example.src).substr(0, 1), "s");
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()),
            1);  // no temp dir
}

// The format as h5py sees it (checksums and all), against what ShardReader returns.
TEST_F(DataPrepare, H5pySeesWhatTheReaderReads) {
  ASSERT_EQ(prepare("--task copy --out " + out_.string() +
                    " --train-size 40 --valid-size 3 --test-size 3 --shard-size 30 --deflate 4")
                .status,
            0);
  const auto shard = out_ / "train-00000.h5";
  const std::string script = text_file("dump.py", R"(
import json, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    out = {"attrs": {k: (v if isinstance(v, str) else int(v)) for k, v in f.attrs.items()}}
    for name in ["src/tokens", "src/offsets", "tgt/tokens", "tgt/offsets", "ids"]:
        d = f[name]
        out[name] = {"dtype": str(d.dtype), "chunked": d.chunks is not None,
                     "compression": d.compression, "fletcher32": d.fletcher32, "data": d[()].tolist()}
print(json.dumps(out))
)");
  const auto dumped = run_command(test_paths::python() + " " + script + " " + shard.string());
  ASSERT_EQ(dumped.status, 0) << dumped.output;
  const auto seen = json::parse(dumped.output);

  const data::ShardReader reader(shard);
  const auto data = reader.read();
  const auto& attrs = seen["attrs"];
  EXPECT_EQ(attrs["format"], "transformer-shard");
  EXPECT_EQ(attrs["format_version"], 2);
  EXPECT_EQ(attrs["num_examples"], 30);
  EXPECT_EQ(attrs["src_vocab_size"], reader.attrs().src_vocab_size);
  EXPECT_EQ(attrs["tgt_vocab_size"], reader.attrs().tgt_vocab_size);
  EXPECT_EQ(attrs["pad_id"], 0);
  EXPECT_EQ(attrs["bos_id"], 1);
  EXPECT_EQ(attrs["eos_id"], 2);
  EXPECT_EQ(attrs["unk_id"], 3);

  EXPECT_EQ(seen["src/tokens"]["dtype"], "int32");
  EXPECT_EQ(seen["src/tokens"]["chunked"], true);
  EXPECT_EQ(seen["src/tokens"]["compression"], "gzip");
  EXPECT_EQ(seen["src/offsets"]["compression"], nullptr);  // only tokens are deflated
  for (const char* name : {"src/tokens", "src/offsets", "tgt/tokens", "tgt/offsets", "ids"})
    EXPECT_EQ(seen[name]["fletcher32"], true) << name;  // every dataset checksummed
  EXPECT_EQ(seen["src/offsets"]["dtype"], "int64");
  EXPECT_EQ(seen["ids"]["dtype"], "int64");
  EXPECT_EQ(seen["src/tokens"]["data"].get<std::vector<int32_t>>(), data.src.tokens);
  EXPECT_EQ(seen["src/offsets"]["data"].get<std::vector<int64_t>>(), data.src.offsets);
  EXPECT_EQ(seen["tgt/tokens"]["data"].get<std::vector<int32_t>>(), data.tgt.tokens);
  EXPECT_EQ(seen["tgt/offsets"]["data"].get<std::vector<int64_t>>(), data.tgt.offsets);
  EXPECT_EQ(seen["ids"]["data"].get<std::vector<int64_t>>(), data.ids);
}

TEST_F(DataPrepare, TextWithCharVocabularyRoundTripsChinese) {
  const auto src = text_file("train.zh", "春风得意马蹄疾\r\n一日看尽长安花\r\n");
  const auto tgt = text_file("train.en", "spring breeze\nall the flowers\n");
  const auto result = prepare("--task text --vocab char --out " + out_.string() + " --train-src " +
                              src + " --train-tgt " + tgt);
  ASSERT_EQ(result.status, 0) << result.output;

  const auto manifest = data::read_manifest(out_);
  EXPECT_EQ(manifest.src_tokenizer_file, "vocab.src.txt");
  EXPECT_EQ(manifest.tgt_tokenizer_file, "vocab.tgt.txt");
  EXPECT_EQ(manifest.src_vocab_size, 4 + 14);
  const auto& sources = manifest.splits.at("train").sources;
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].sha256, run_command("sha256sum " + src).output.substr(0, 64));

  const data::Dataset train(out_, "train");
  const auto zh =
      data::load_tokenizer(data::TokenizerKind::kChar, out_ / manifest.src_tokenizer_file);
  const auto en =
      data::load_tokenizer(data::TokenizerKind::kChar, out_ / manifest.tgt_tokenizer_file);
  EXPECT_EQ(train.get(0).src.size(), 7u);
  EXPECT_EQ(zh->decode(train.get(0).src), "春风得意马蹄疾");
  EXPECT_EQ(zh->decode(train.get(1).src), "一日看尽长安花");
  EXPECT_EQ(en->decode(train.get(1).tgt), "all the flowers");

  data::PrepareOptions joint;  // the library function behind the program
  joint.task = data::Task::kText;
  joint.out = dir_ / "joint";
  joint.text["train"] = {src, tgt};
  joint.joint_vocab = true;
  const auto joint_manifest = data::prepare_dataset(joint);
  EXPECT_EQ(joint_manifest.src_tokenizer_file, "vocab.txt");
  EXPECT_EQ(joint_manifest.tgt_tokenizer_file, "vocab.txt");
  EXPECT_EQ(joint_manifest.src_vocab_size, joint_manifest.tgt_vocab_size);
  EXPECT_TRUE(fs::exists(joint.out / "vocab.txt"));
}

// A classification dataset through Dataset: each example's text and label
// name as written in the TSV (here by hand), labels as h5py reads them.
TEST_F(DataPrepare, ClassifyExamplesCarryTheirLabels) {
  const auto train = text_file("train.tsv",
                               "sport\tdas Spiel\nwetter\tRegen  und Sonne\n"
                               "sport\t \npolitik\tdie Wahl\nwetter\tSonne\n");
  const auto valid = text_file("valid.tsv", "politik\tdie Wahl und das Spiel\n");
  const auto result = prepare("--task classify --out " + out_.string() +
                              " --shard-size 2 --train-tsv " + train + " --valid-tsv " + valid);
  ASSERT_EQ(result.status, 0) << result.output;

  const data::Dataset dataset(out_, "train");
  EXPECT_TRUE(dataset.manifest().is_classification());
  EXPECT_EQ(dataset.manifest().src_tokenizer_file, dataset.manifest().tgt_tokenizer_file);
  ASSERT_EQ(dataset.labels().size(), 3);
  EXPECT_EQ(dataset.labels().name(0), "politik");  // sorted
  const auto words = data::load_tokenizer(data::TokenizerKind::kWord,
                                          out_ / dataset.manifest().src_tokenizer_file);
  const std::vector<std::tuple<int64_t, std::string, std::string>> expected = {
      {0, "das Spiel", "sport"},
      {1, "Regen und Sonne", "wetter"},  // line 2: empty text, dropped
      {3, "die Wahl", "politik"},
      {4, "Sonne", "wetter"}};
  ASSERT_EQ(dataset.size(), 4);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    const auto example = dataset.get(i);
    EXPECT_TRUE(example.tgt.empty());
    EXPECT_EQ(std::make_tuple(example.id, words->decode(example.src),
                              dataset.labels().name(example.label)),
              expected[i]);
    labels.push_back(example.label);
  }
  const std::string script = text_file("labels.py", R"(
import sys, h5py
print(" ".join(str(l) for shard in sys.argv[1:] for l in h5py.File(shard, "r")["labels"][:]))
)");
  const auto seen =
      run_command(test_paths::python() + " " + script + " " + (out_ / "train-00000.h5").string() +
                  " " + (out_ / "train-00001.h5").string());
  ASSERT_EQ(seen.status, 0) << seen.output;
  EXPECT_EQ(seen.output, "1 2 0 2\n");  // politik 0, sport 1, wetter 2
  EXPECT_EQ(labels, (std::vector<int64_t>{1, 2, 0, 2}));
  const data::Dataset valid_set(out_, "valid");
  EXPECT_EQ(valid_set.labels().name(valid_set.get(0).label), "politik");
}

TEST_F(DataPrepare, ReaderNamesMissingDirSplitShardAndField) {
  const auto expect_error = [](const auto& open, const std::vector<std::string>& mentions) {
    try {
      open();
      ADD_FAILURE() << "expected an error";
    } catch (const std::exception& e) {
      for (const auto& mention : mentions) EXPECT_TRUE(contains(e.what(), mention)) << e.what();
    }
  };
  const auto absent = dir_ / "absent";
  expect_error([&] { data::Dataset(absent, "train"); }, {absent.string()});

  data::PrepareOptions copy;
  copy.task = data::Task::kCopy;
  copy.out = out_;
  copy.sizes = {{"train", 5}, {"valid", 2}};
  data::prepare_dataset(copy);
  expect_error([&] { data::Dataset(out_, "dev"); }, {out_.string(), "'dev'", "train, valid"});

  const auto manifest_file = out_ / "manifest.json";
  auto document = json::parse(std::ifstream(manifest_file));
  document["splits"]["train"]["shards"][0].erase("sha256");
  std::ofstream(manifest_file) << document.dump();
  expect_error([&] { data::read_manifest(out_); },
               {manifest_file.string(), "splits.train.shards[0].sha256"});

  document.erase("splits");
  std::ofstream(manifest_file) << document.dump();
  expect_error([&] { data::read_manifest(out_); }, {"'splits' is missing"});

  copy.force = true;
  data::prepare_dataset(copy);
  fs::remove(out_ / "valid-00000.h5");
  expect_error([&] { data::Dataset(out_, "valid"); }, {(out_ / "valid-00000.h5").string()});
}

}  // namespace
