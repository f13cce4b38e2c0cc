// prepare_data refuses bad input: it exits with status 1 and a message naming
// the file or option at fault, and leaves no dataset or temporary directory.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/holder_lock.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

namespace fs = std::filesystem;

using Result = test_util::CommandResult;

Result prepare_data(const std::string& arguments) {
  return test_util::run_command(test_paths::bin_dir() + "/prepare_data " + arguments);
}

class DataCli : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    out_ = (dir_ / "dataset").string();
  }

  std::string text_file(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name, std::ios::binary) << content;
    return (dir_ / name).string();
  }

  // Status 1 (2: a usage error) and every one of `mentions` in the output.
  static void expect_failure(const Result& result, const std::vector<std::string>& mentions,
                             int status = 1) {
    EXPECT_EQ(result.status, status) << result.output;
    for (const auto& mention : mentions) {
      EXPECT_NE(result.output.find(mention), std::string::npos)
          << "'" << mention << "' not in: " << result.output;
    }
  }

  // Nothing but `allowed` in the test directory: no dataset, no "<out>.tmp-XXXXXX".
  void expect_only(const std::vector<std::string>& allowed) const {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const auto name = entry.path().filename().string();
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), name), allowed.end()) << name;
    }
  }

  std::string out_;
};

TEST_F(DataCli, MissingTextFileIsNamed) {
  const auto tgt = text_file("train.en", "a\n");
  const auto missing = (dir_ / "train.de").string();
  expect_failure(
      prepare_data("--task text --out " + out_ + " --train-src " + missing + " --train-tgt " + tgt),
      {missing});
  expect_only({"train.en"});
}

// The mismatch is in a later split (valid): train was already written to the
// temporary directory, and must not survive.
TEST_F(DataCli, LineCountMismatchNamesBothFilesAndCounts) {
  const auto src = text_file("train.de", "a b\n");
  const auto tgt = text_file("train.en", "c d\n");
  const auto valid_src = text_file("valid.de", "a\nb\nc\n");
  const auto valid_tgt = text_file("valid.en", "a\nb\n");
  expect_failure(
      prepare_data("--task text --out " + out_ + " --train-src " + src + " --train-tgt " + tgt +
                   " --valid-src " + valid_src + " --valid-tgt " + valid_tgt),
      {valid_src, valid_tgt, "3 lines", "has 2"});
  expect_only({"train.de", "train.en", "valid.de", "valid.en"});
}

TEST_F(DataCli, EmptyInputIsRefused) {
  const auto src = text_file("train.de", "");
  const auto tgt = text_file("train.en", "");
  expect_failure(
      prepare_data("--task text --out " + out_ + " --train-src " + src + " --train-tgt " + tgt),
      {src, "empty"});
}

// A line of one 5 MB "word" passes the word rules; the byte cap drops it. A
// 2000-character line of 1000 words of 1 letter is 1999 characters, over the
// token cap once the char tokenizer encodes it. Both are counted in the
// summary and the manifest; the ordinary pairs are kept.
TEST_F(DataCli, LongLinesAreDroppedAndCounted) {
  std::string words;  // "a a a ...": 1000 words, 1999 bytes and characters
  for (int i = 0; i < 1000; ++i) words += i == 0 ? "a" : " a";
  const std::string blob(5 << 20, 'x');
  const auto src = text_file("train.de", "ein Haus\n" + blob + "\n" + words + "\nklein\n");
  const auto tgt = text_file("train.en", "a house\nx\n" + words + "\nsmall\n");
  const auto result =
      prepare_data("--task text --vocab char --out " + out_ + " --train-src " + src +
                   " --train-tgt " + tgt + " --clean-max-words 0 --clean-ratio 0");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("kept 2 examples; dropped 0 empty, 1 over 4096 bytes"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("1 over 1024 tokens"), std::string::npos) << result.output;
  std::ifstream manifest(fs::path(out_) / "manifest.json");
  const auto cleaning = nlohmann::json::parse(manifest).at("prepare").at("cleaning");
  EXPECT_EQ(cleaning.at("kept"), 2);
  EXPECT_EQ(cleaning.at("dropped").at("too_many_bytes"), 1);
  EXPECT_EQ(cleaning.at("dropped").at("too_many_tokens"), 1);
}

TEST_F(DataCli, ExistingOutputNeedsForce) {
  fs::create_directories(out_);
  text_file("dataset/keep.txt", "precious");
  const std::string copy = "--task copy --train-size 5 --out " + out_;
  expect_failure(prepare_data(copy), {out_, "--force"});
  EXPECT_TRUE(fs::exists(fs::path(out_) / "keep.txt"));

  const auto forced = prepare_data(copy + " --force");
  ASSERT_EQ(forced.status, 0) << forced.output;
  EXPECT_FALSE(fs::exists(fs::path(out_) / "keep.txt"));
  EXPECT_TRUE(fs::exists(fs::path(out_) / "manifest.json"));
  expect_only({"dataset"});
}

// The remedy every split-index message names, with the dataset given
// absolute or relative, and nothing else on its command line.
TEST_F(DataCli, UpgradeRunsAloneAndNamesAnyOtherOption) {
  ASSERT_EQ(prepare_data("--task copy --train-size 5 --out " + out_).status, 0);
  const auto absolute = prepare_data("--upgrade " + out_);
  EXPECT_EQ(absolute.status, 0) << absolute.output;
  EXPECT_NE(absolute.output.find("already up to date"), std::string::npos) << absolute.output;
  const auto relative = test_util::run_command("cd " + dir_.string() + " && " +
                                               test_paths::bin_dir() + "/prepare_data --upgrade dataset");
  EXPECT_EQ(relative.status, 0) << relative.output;
  expect_failure(prepare_data("--upgrade " + out_ + " --force"),
                 {"--upgrade DIR takes no other option (--force given)"}, 2);
  // One upgrade at a time: with an index to rebuild, a second, while this
  // process holds the first's lock, is refused naming the holder (POSIX
  // locks conflict across processes); once it is let go, the upgrade runs.
  ASSERT_TRUE(fs::remove(fs::path(out_) / "train.index"));
  {
    const base::HolderLock first(out_ + "/.upgrade.lock", "");
    expect_failure(prepare_data("--upgrade " + out_),
                   {"is being upgraded by another prepare_data --upgrade",
                    "PID " + std::to_string(::getpid())});
  }
  const auto after = prepare_data("--upgrade " + out_);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_NE(after.output.find("split indexes written: train"), std::string::npos) << after.output;
}

// A dataset is shared: it gets the mode a directory made under the user's
// umask gets (mkdtemp's 0700 does not survive), and a manifest that cannot
// be opened says why (the errno: here a link to itself, which root meets as
// anyone does, where a permission would not stop root).
TEST_F(DataCli, TheDatasetFollowsTheUmaskAndAManifestThatCannotBeOpenedSaysWhy) {
  for (const auto& [umask, mode] : {std::pair{"022", fs::perms(0755)}, {"027", fs::perms(0750)}}) {
    const auto made = test_util::run_command("umask " + std::string(umask) + " && " +
                                             test_paths::bin_dir() + "/prepare_data --task copy "
                                             "--train-size 5 --force --out " + out_);
    ASSERT_EQ(made.status, 0) << made.output;
    EXPECT_EQ(fs::status(out_).permissions() & fs::perms::all, mode) << "umask " << umask;
  }
  fs::remove(fs::path(out_) / "manifest.json");
  fs::create_symlink("manifest.json", fs::path(out_) / "manifest.json");
  expect_failure(prepare_data("--upgrade " + out_),
                 {"manifest.json", "Too many levels of symbolic links"});
}

TEST_F(DataCli, MalformedNumberIsAUsageErrorNotACrash) {
  const auto word = prepare_data("--task copy --out " + out_ + " --shard-mb abc");
  expect_failure(word, {"--shard-mb (dataset.shard_mb) must be an integer, got 'abc'"}, 2);
  const auto negative = prepare_data("--task copy --out " + out_ + " --shard-mb -1");
  expect_failure(negative, {"--shard-mb must be in 0..1048576, not -1"}, 2);
  expect_only({});
}

TEST_F(DataCli, RequiredAndUnknownSettingsAreNamed) {
  expect_failure(prepare_data("--out " + out_),
                 {"dataset.task is required: give --task (dataset.task)"}, 2);
  expect_failure(
      prepare_data("--task sort --out " + out_),
      {"--task (dataset.task) must be one of {copy, reverse, majority, text, classify}, got "
       "'sort'"},
      2);
  const auto file = text_file("prep.toml", "[dataset]\ntask = \"copy\"\nshards = 3\n");
  expect_failure(prepare_data("--config " + file + " --out " + out_),
                 {file, "unknown key 'dataset.shards'", "shard_size"}, 2);
  expect_only({"prep.toml"});
}

// A settings file gives what the command line would, and the command line
// overrides it: the same dataset as from options alone.
TEST_F(DataCli, SettingsFileEqualsTheCommandLine) {
  const auto file = text_file("prep.toml",
                              "[dataset]\ntask = \"reverse\"\nout = \"elsewhere\"\n"
                              "[synthetic]\nseed = 7\ntrain_size = 30\nvalid_size = 4\n"
                              "test_size = 0\nsymbols = 9\n");
  const auto from_file = prepare_data("--config " + file + " --out " + out_);
  ASSERT_EQ(from_file.status, 0) << from_file.output;
  const std::string by_options = (dir_ / "by_options").string();
  const auto from_options =
      prepare_data("--task reverse --out " + by_options +
                   " --seed 7 --train-size 30 --valid-size 4 --test-size 0 --symbols 9");
  ASSERT_EQ(from_options.status, 0) << from_options.output;
  const auto content = [](const std::string& dir) {
    std::ifstream in(fs::path(dir) / "manifest.json");
    return nlohmann::json::parse(in).at("content_sha256");
  };
  EXPECT_EQ(content(out_), content(by_options));
  expect_only({"prep.toml", "dataset", "by_options"});
}

// docs/prepare_data.md is prepare_data's own reference. After a change to a
// setting: build/bin/prepare_data --config-reference > docs/prepare_data.md
TEST_F(DataCli, ReferenceIsPrepareDatasOwn) {
  const auto printed = prepare_data("--config-reference");
  ASSERT_EQ(printed.status, 0) << printed.output;
  std::ifstream in(fs::path(test_paths::source_dir()) / "docs/prepare_data.md");
  const std::string documented(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(printed.output, documented)
      << "docs/prepare_data.md is out of date: regenerate it with prepare_data --config-reference";
}

TEST_F(DataCli, OptionsOfTheOtherTaskAreRefused) {
  const auto src = text_file("train.de", "a\n");
  expect_failure(prepare_data("--task copy --out " + out_ + " --train-src " + src),
                 {"--train-src", "--task copy"}, 2);
  expect_failure(prepare_data("--task text --out " + out_ + " --train-src " + src),
                 {"--train-src", "--train-tgt"}, 2);
  expect_failure(
      prepare_data("--task classify --out " + out_ + " --train-tsv " + src + " --train-src " + src),
      {"--train-src (text.train_src) does not apply to --task classify"}, 2);
  expect_failure(prepare_data("--task text --out " + out_ + " --train-src " + src +
                              " --train-tgt " + src + " --valid-tsv " + src),
                 {"--valid-tsv (classify.valid_tsv) does not apply to --task text"}, 2);
  expect_failure(prepare_data("--task copy --out " + out_ + " --classes 3"),
                 {"--classes (majority.classes) does not apply to --task copy"}, 2);
  expect_failure(prepare_data("--task majority --out " + out_ + " --vocab char"),
                 {"--vocab (tokenizer.kind) does not apply to --task majority"}, 2);
  expect_failure(prepare_data("--task classify --out " + out_ + " --valid-tsv " + src),
                 {"--train-tsv"}, 2);
  expect_only({"train.de"});
}

}  // namespace
