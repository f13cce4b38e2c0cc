// A checkpoint's files read once and checked as they are read
// (checkpoint/checkpoint_files.h): the bytes read are the file's, a file
// that differs from its SHA256SUMS entry, a listing that lists a file twice
// or a directory in a file's place, and a listed file that a load does not
// read are each refused as Unverified, naming the file; the sha256sum tool
// agrees with the listing that passes. And a checkpoint written by hand,
// against digests known from elsewhere.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/unit/checkpoint_test.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/checkpoint/snapshot.h"

namespace {

namespace fs = std::filesystem;
using test_util::error_of;
using test_util::expect_mentions;

class CheckpointFilesTest : public test_util::CheckpointTest {
 protected:
  std::string save() {
    checkpoint::Snapshot snapshot;
    checkpoint::take_snapshot(snapshot, 3,
                              checkpoint::whole_checkpoint(*linear_, adam_, {{"step", 3}}));
    return checkpoint::Checkpoints(run()).save(snapshot);
  }
  static std::string bytes_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void append_to_sums(const std::string& dir, const std::string& line) {
    std::ofstream(fs::path(dir) / "SHA256SUMS", std::ios::app) << line << "\n";
  }
};

TEST_F(CheckpointFilesTest, ReadsTheBytesItChecked) {
  const std::string dir = save();
  const auto check = test_util::run_command("cd '" + dir + "' && sha256sum -c --quiet SHA256SUMS");
  ASSERT_EQ(check.status, 0) << check.output;
  const checkpoint::CheckpointFiles files(dir);
  for (const auto& name : files.listed()) {
    const std::vector<char> read = files.read(name);
    EXPECT_EQ(std::string(read.begin(), read.end()), bytes_of(fs::path(dir) / name)) << name;
  }
  EXPECT_EQ(files.optimizer_files(), std::vector<std::string>{"optimizer.pt"});
  EXPECT_NO_THROW(files.check_unloaded());
}

TEST_F(CheckpointFilesTest, AFileThatDiffersIsUnverified) {
  const std::string dir = save();
  const checkpoint::CheckpointFiles files(dir);
  std::ofstream(fs::path(dir) / "model.pt", std::ios::app) << "x";
  EXPECT_THROW(files.read("model.pt"), checkpoint::Unverified);
  expect_mentions(error_of([&] { files.read("model.pt"); }),
                  {dir + "/model.pt", "does not match its SHA256SUMS entry"});
  EXPECT_THROW(files.check("model.pt"), checkpoint::Unverified);
  EXPECT_NO_THROW(files.read("state.json")) << "the others still read";
}

TEST_F(CheckpointFilesTest, AListingThatCannotBeTrustedIsUnverified) {
  const std::string dir = save();
  const std::string state_line = [&] {
    std::ifstream in(fs::path(dir) / "SHA256SUMS");
    for (std::string line; std::getline(in, line);)
      if (line.find("state.json") != std::string::npos) return line;
    return std::string();
  }();
  ASSERT_FALSE(state_line.empty());
  append_to_sums(dir, std::string(64, '0') + "  state.json");
  EXPECT_THROW(checkpoint::CheckpointFiles{dir}, checkpoint::Unverified);
  expect_mentions(error_of([&] { checkpoint::CheckpointFiles{dir}; }),
                  {"SHA256SUMS lists state.json twice"});

  const std::string other = (dir_ / "other").string();
  fs::copy(dir, other);
  fs::remove(fs::path(other) / "SHA256SUMS");
  std::ofstream(fs::path(other) / "SHA256SUMS")
      << bytes_of(fs::path(dir) / "SHA256SUMS")
             .substr(0, bytes_of(fs::path(dir) / "SHA256SUMS").rfind(std::string(64, '0')));
  EXPECT_NO_THROW(checkpoint::CheckpointFiles{other}) << "the listing as it was";
  fs::remove(fs::path(other) / "model.pt");
  fs::create_directory(fs::path(other) / "model.pt");
  expect_mentions(error_of([&] { checkpoint::CheckpointFiles{other}; }),
                  {other + "/model.pt", "is not a file"});
}

TEST_F(CheckpointFilesTest, AListedFileThatNoLoadReadsIsCheckedToo) {
  const std::string dir = save();
  std::ofstream(fs::path(dir) / "notes.txt") << "kept beside";
  append_to_sums(dir, std::string(64, 'a') + "  notes.txt");  // not its digest
  const checkpoint::CheckpointFiles files(dir);
  expect_mentions(error_of([&] { files.check_unloaded(); }),
                  {dir + "/notes.txt", "does not match its SHA256SUMS entry"});
  std::string why;
  EXPECT_FALSE(test_util::verify_checkpoint(dir, &why));
  expect_mentions(why, {"notes.txt"});
}

// A checkpoint directory written by the test: digests of "abc" and "" are the
// FIPS 180-2 example and the empty string's; state.json's comes from sha256sum.
class HandWrittenCheckpoint : public test_util::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(dir_ / "model.pt") << "abc";
    std::ofstream(dir_ / "optimizer.pt");
    std::ofstream(dir_ / "state.json") << "{\"step\": 4}\n";
  }
  // state.json's line of SHA256SUMS, its digest from sha256sum.
  std::string state_line() const {
    const auto digest =
        test_util::run_command("sha256sum '" + (dir_ / "state.json").string() + "'");
    EXPECT_EQ(digest.status, 0) << digest.output;
    return digest.output.substr(0, 64) + "  state.json";
  }
  void write_sums(const std::vector<std::string>& lines) const {
    std::ofstream sums(dir_ / "SHA256SUMS");
    for (const auto& line : lines) sums << line << "\n";
  }
  std::string why_not() const {
    std::string why;
    EXPECT_FALSE(test_util::verify_checkpoint(dir_.string(), &why));
    return why;
  }
  std::string model_line() const {
    return "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  model.pt";
  }
  std::string optimizer_line() const {
    return "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  optimizer.pt";
  }
};

TEST_F(HandWrittenCheckpoint, VerifiesAgainstKnownDigests) {
  write_sums({model_line(), optimizer_line(), state_line()});
  std::string why;
  EXPECT_TRUE(test_util::verify_checkpoint(dir_.string(), &why)) << why;
  EXPECT_EQ(test_util::read_state(dir_.string()), nlohmann::json({{"step", 4}}));
}

TEST_F(HandWrittenCheckpoint, AChangedByteIsNamed) {
  write_sums({model_line(), optimizer_line(), state_line()});
  std::ofstream(dir_ / "model.pt") << "abd";
  expect_mentions(why_not(), {(dir_ / "model.pt").string(), "does not match its SHA256SUMS entry"});
}

TEST_F(HandWrittenCheckpoint, AMissingFileIsNamed) {
  write_sums({model_line(), optimizer_line(), state_line()});
  fs::remove(dir_ / "optimizer.pt");
  expect_mentions(why_not(), {(dir_ / "optimizer.pt").string(), "is missing"});
}

TEST_F(HandWrittenCheckpoint, MissingOrShortSumsAreRefused) {
  expect_mentions(why_not(), {(dir_ / "SHA256SUMS").string(), "is missing"});
  write_sums({model_line(), state_line()});  // optimizer.pt unchecked
  expect_mentions(why_not(), {"SHA256SUMS lists no optimizer state"});
  write_sums({optimizer_line(), state_line()});
  expect_mentions(why_not(), {"SHA256SUMS does not list model.pt"});
}

// A state.json that is not JSON, its digest listed: the parse names it.
TEST_F(HandWrittenCheckpoint, UnreadableStateIsNamed) {
  std::ofstream(dir_ / "state.json") << "{\"step\": ";
  write_sums({model_line(), optimizer_line(), state_line()});
  expect_mentions(error_of([&] { test_util::read_state(dir_.string()); }),
                  {(dir_ / "state.json").string(), "parse error"});
}

}  // namespace
