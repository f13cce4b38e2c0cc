// MetricsLog: a fresh run starts an empty file; a resumed run keeps the rows
// up to the step it resumes from and drops the later ones (and a line a crash
// left half-written), so the file reads as one run. Files written by the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/unit/error_message.h"
#include "tests/unit/temp_dir_test.h"
#include "trainer/train/metrics_log.h"

namespace {

namespace fs = std::filesystem;

class MetricsLog : public test_util::TempDirTest {
 protected:
  std::string path() const { return (dir_ / "metrics.jsonl").string(); }
  // The file as an interrupted run left it: steps 10..50, the last line cut off.
  void write_interrupted_run() const {
    std::ofstream(path()) << "{\"step\":10,\"loss\":4.5}\n"
                             "{\"step\":20,\"loss\":3.25}\n"
                             "{\"step\":30,\"loss\":2.5}\n"
                             "{\"step\":40,\"loss\":2.0}\n"
                             "{\"step\":50,\"lo";
  }
  std::vector<std::string> lines() const {
    std::ifstream in(path());
    std::vector<std::string> found;
    for (std::string line; std::getline(in, line);) found.push_back(line);
    return found;
  }
};

TEST_F(MetricsLog, AResumedRunDropsTheRowsAfterItsStep) {
  write_interrupted_run();
  train::MetricsLog log(path(), 20);
  EXPECT_EQ(lines(), (std::vector<std::string>{"{\"step\":10,\"loss\":4.5}",
                                               "{\"step\":20,\"loss\":3.25}"}));
  log.write({{"step", 30}, {"loss", 2.75}});  // flushed: readable while the log is open
  ASSERT_EQ(lines().size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines()[2]), nlohmann::json({{"step", 30}, {"loss", 2.75}}));
  EXPECT_FALSE(fs::exists(path() + ".tmp"));
}

TEST_F(MetricsLog, ResumingAtTheLastRowKeepsEveryCompleteRow) {
  write_interrupted_run();
  train::MetricsLog log(path(), 40);
  EXPECT_EQ(lines().size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(lines().back()).at("step"), 40);
}

TEST_F(MetricsLog, AFreshRunStartsEmpty) {
  write_interrupted_run();
  train::MetricsLog log(path(), 0);
  EXPECT_TRUE(lines().empty());
  log.write({{"step", 1}, {"loss", 5.0}});
  log.write({{"step", 2}, {"loss", 4.0}});
  ASSERT_EQ(lines().size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines()[0]).at("step"), 1);
  EXPECT_EQ(nlohmann::json::parse(lines()[1]).at("loss"), 4.0);
}

TEST_F(MetricsLog, RowsWithoutAStepAreDropped) {
  std::ofstream(path()) << "{\"step\":5,\"loss\":1.0}\n{\"loss\":0.5}\n[5]\nnot json\n\n";
  train::MetricsLog log(path(), 100);
  EXPECT_EQ(lines(), std::vector<std::string>{"{\"step\":5,\"loss\":1.0}"});
}

TEST_F(MetricsLog, AMissingFileIsCreated) {
  train::MetricsLog log(path(), 20);
  log.write({{"step", 21}});
  EXPECT_EQ(lines(), std::vector<std::string>{"{\"step\":21}"});
}

TEST_F(MetricsLog, AnUnwritablePlaceIsNamed) {
  const std::string nowhere = (dir_ / "no-such-dir" / "metrics.jsonl").string();
  test_util::expect_mentions(test_util::error_of([&] { train::MetricsLog log(nowhere, 0); }),
                             {"cannot write " + nowhere + ": No such file or directory"});
}

}  // namespace
