// trainer and evaluate refuse bad input with a message naming the thing at
// fault and a non-zero exit status.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/run_command.h"
#include "tests/unit/temp_dir_test.h"
#include "tests/unit/test_paths.h"

namespace {

namespace fs = std::filesystem;

class TrainCli : public test_util::TempDirTest {
 protected:
  static test_util::CommandResult program(const std::string& name, const std::string& args) {
    return test_util::run_command(test_paths::bin_dir() + "/" + name + " " + args);
  }
  static void expect_failure(const test_util::CommandResult& r, const std::string& mention) {
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find(mention), std::string::npos)
        << "'" << mention << "' not in: " << r.output;
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
};

TEST_F(TrainCli, UnknownConfigKeyIsNamed) {
  const auto cfg = file("typo.toml", "[model]\nd_modl = 64\n");
  expect_failure(program("trainer", "--config " + cfg), "unknown key 'model.d_modl'");
}

TEST_F(TrainCli, UnknownCommandLineOptionIsNamed) {
  expect_failure(program("trainer", "--model.d_modl 64"), "--model.d_modl");
}

// Every command-line or config error exits 2 (exit_codes.h), not CLI11's own
// codes (unknown option 109, missing value 114, ...); --help exits 0.
TEST_F(TrainCli, CommandLineErrorsExitTwo) {
  for (const std::string program_name : {"trainer", "evaluate"})
    for (const std::string args : {"--no-such-option 1", "--config", "--threads abc"}) {
      const auto r = program(program_name, args);
      EXPECT_EQ(r.status, 2) << program_name << " " << args << ": " << r.output;
    }
  EXPECT_EQ(program("trainer", "--train.max_steps abc").status, 2);
  EXPECT_EQ(program("trainer", "--help").status, 0);
  EXPECT_EQ(program("evaluate", "--help").status, 0);
}

// TRAINER_STARTUP_TIMEOUT_S is seconds >= 0: anything else is refused naming
// the variable (it was read as 0 and silently turned the watchdog off).
TEST_F(TrainCli, StartupTimeoutMustBeSeconds) {
  for (const std::string value : {"abc", "-5", "1e999", "", "30s"}) {
    const auto r = test_util::run_command("TRAINER_STARTUP_TIMEOUT_S='" + value + "' " +
                                          test_paths::bin_dir() + "/trainer --config-reference");
    EXPECT_EQ(r.status, 2) << "'" << value << "': " << r.output;
    EXPECT_NE(r.output.find("TRAINER_STARTUP_TIMEOUT_S must be seconds"), std::string::npos)
        << "'" << value << "': " << r.output;
  }
  const auto fine = test_util::run_command("TRAINER_STARTUP_TIMEOUT_S=0.5e3 " +
                                           test_paths::bin_dir() + "/trainer --config-reference");
  EXPECT_EQ(fine.status, 0) << fine.output;
}

// A number out of range is refused saying what is wanted, in one short line.
TEST_F(TrainCli, EvaluateNumbersOutOfRangeSayWhatIsWanted) {
  const auto beam = program("evaluate", "--run " + dir_.string() + " --beam 0");
  EXPECT_EQ(beam.status, 2);
  EXPECT_NE(beam.output.find("--beam (decode.beam): must be positive, not 0"), std::string::npos)
      << beam.output;
  EXPECT_LT(beam.output.size(), 200u) << beam.output;
  const auto penalty = program("evaluate", "--run " + dir_.string() + " --length-penalty -1");
  EXPECT_NE(penalty.output.find("--length-penalty (decode.length_penalty): must be non-negative, "
                                "not -1"),
            std::string::npos)
      << penalty.output;
}

// docs/configuration.md and docs/evaluate.md are the trainer's and
// evaluate's own references, so they cannot drift from the keys, defaults and
// values the programs accept. After a change to a setting:
// build/bin/trainer --config-reference > docs/configuration.md (evaluate: docs/evaluate.md)
TEST_F(TrainCli, ReferencesAreThePrograms) {
  const auto read = [](const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const auto& [name, doc] :
       {std::pair{"trainer", "docs/configuration.md"}, std::pair{"evaluate", "docs/evaluate.md"}}) {
    const fs::path printed_file = dir_ / (std::string(name) + ".md");
    const auto printed =
        test_util::run_command(test_paths::bin_dir() + "/" + name + " --config-reference " +
                               "2>/dev/null > " + printed_file.string());
    ASSERT_EQ(printed.status, 0) << name << ": " << printed.output;
    EXPECT_EQ(read(printed_file), read(fs::path(test_paths::source_dir()) / doc))
        << doc << " is out of date: regenerate it with " << name << " --config-reference";
  }
}

TEST_F(TrainCli, HelpShowsDefaultsAndValues) {
  for (const auto& [name, shown] :
       {std::pair{"trainer", "--model.d_model INT=512"},
        std::pair{"trainer", "--model.norm {pre,post}=pre"},
        std::pair{"trainer", "--resume latest|best|none|DIR=latest"},
        std::pair{"evaluate", "--decode.beam,--beam INT=1"},
        std::pair{"evaluate", "--score.bleu_tokenize,--bleu-tokenize {auto,13a,char,none,zh}=auto"},
        std::pair{"evaluate", "--runtime.device,--device {auto,cpu,cuda}=auto"}}) {
    const auto help = program(name, "--help");
    ASSERT_EQ(help.status, 0) << help.output;
    EXPECT_NE(help.output.find(shown), std::string::npos) << shown << " not in " << help.output;
  }
}

// evaluate's settings from a file, overridden on the command line; a key of
// the wrong type is refused naming the file and the key.
TEST_F(TrainCli, EvaluateReadsItsSettingsFile) {
  const auto cfg = file("eval.toml", "[decode]\nbeam = 0\n");
  expect_failure(program("evaluate", "--run " + dir_.string() + " --config " + cfg),
                 "decode.beam in " + cfg + ": must be positive, not 0");
  const auto typed = file("typed.toml", "[decode]\nbeam = \"four\"\n");
  expect_failure(program("evaluate", "--run " + dir_.string() + " --config " + typed),
                 "typed.toml");
  // The command line wins over the file: beam 0 from the file is replaced,
  // and the run directory's own absence is what is left to refuse.
  expect_failure(
      program("evaluate", "--run " + (dir_ / "no-run").string() + " --config " + cfg + " --beam 2"),
      "no-run: no such directory");
}

TEST_F(TrainCli, MissingConfigFileIsNamed) {
  expect_failure(program("trainer", "--config " + (dir_ / "nope.toml").string()), "nope.toml");
}

TEST_F(TrainCli, MissingDatasetDirectoryIsNamed) {
  const auto missing = (dir_ / "no-such-dataset").string();
  const auto r =
      program("trainer", "--data.dir " + missing + " --run.out_dir " + (dir_ / "runs").string());
  expect_failure(r, missing);
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "default" / "checkpoints")) << "nothing half-written";
}

TEST_F(TrainCli, EvaluateWithoutCheckpointOrSplitIsNamed) {
  ASSERT_EQ(program("prepare_data", "--task copy --out " + (dir_ / "data").string() +
                                        " --train-size 40 --valid-size 0 --test-size 4")
                .status,
            0);
  fs::create_directories(dir_ / "run");
  file("run/config.toml", "[data]\ndir = \"" + (dir_ / "data").string() + "\"\n");
  const auto run = (dir_ / "run").string();
  expect_failure(program("evaluate", "--run " + run + " --split test"), "checkpoints/latest");
  expect_failure(program("evaluate", "--run " + run + " --split valid"), "valid");
  expect_failure(program("evaluate", "--run " + (dir_ / "no-run").string()), "no-run");
}

}  // namespace
