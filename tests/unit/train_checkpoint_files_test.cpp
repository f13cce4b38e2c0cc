// A checkpoint's files read once and checked as they are read
// (checkpoint/checkpoint_files.h): the bytes read are the file's, a file
// that differs from its SHA256SUMS entry, a listing that lists a file twice
// or a directory in a file's place, and a listed file that a load does not
// read are each refused as Unverified, naming the file; the sha256sum tool
// agrees with the listing that passes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/unit/checkpoint_test.h"
#include "tests/unit/error_message.h"
#include "tests/unit/run_command.h"
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

}  // namespace
