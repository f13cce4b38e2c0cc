// The run config: TOML sections, command-line overrides, errors that name the key.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "settings/schema.h"
#include "trainer/config/run_config.h"

namespace {

std::string write_toml(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

// Parses argv (program name first) into a fresh RunConfigOptions.
void parse(config::RunConfigOptions& opts, CLI::App& app, std::vector<std::string> args) {
  std::vector<const char*> argv{"test"};
  for (auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  opts.resolve();
}

TEST(RunConfig, FileThenCommandLineOverrides) {
  const auto path = write_toml("cfg_ok.toml",
                               "[model]\nd_model = 64\nheads = 4\nnorm = \"post\"\n"
                               "[optim]\nlr = 0.5\n");
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--config", path, "--model.heads", "8", "--optim.schedule", "constant"});
  EXPECT_EQ(opts.config().model.d_model, 64);
  EXPECT_EQ(opts.config().model.heads, 8);  // command line wins
  EXPECT_EQ(opts.config().model.norm, model::NormPlacement::kPost);
  EXPECT_DOUBLE_EQ(opts.config().optim.lr, 0.5);
  EXPECT_EQ(opts.config().optim.schedule, config::Schedule::kConstant);
  EXPECT_EQ(opts.config().model.d_ff, 2048);  // default kept
}

TEST(RunConfig, AnOptionGivenTwiceTakesTheLastValue) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--model.heads", "2", "--dist.overlap", "false", "--model.heads", "16"});
  EXPECT_EQ(opts.config().model.heads, 16);
  EXPECT_FALSE(opts.config().dist.overlap);
}

TEST(RunConfig, ResolvedTomlReadsBackTheSame) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--model.dropout", "0.25", "--run.name", "x y"});
  const auto path = write_toml("cfg_resolved.toml", opts.to_toml());
  CLI::App app2;
  config::RunConfigOptions again(app2);
  parse(again, app2, {"--config", path});
  EXPECT_EQ(again.to_toml(), opts.to_toml());
  EXPECT_DOUBLE_EQ(again.config().model.dropout, 0.25);
  EXPECT_EQ(again.config().run.name, "x y");
}

// Text and paths as TOML escapes them: a newline in run.out_dir (a file
// name may hold one), quotes, a backslash, a tab and another control
// character read back the same from the saved config.toml.
TEST(RunConfig, ControlCharactersAndQuotesReadBackTheSame) {
  const std::string name = "a \"b\" \\c\td\x01" "e", out_dir = "/tmp/runs\nnext";
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--run.name", name, "--run.out_dir", out_dir});
  const std::string toml = opts.to_toml();
  EXPECT_NE(toml.find("out_dir = \"/tmp/runs\\nnext\""), std::string::npos) << toml;
  const auto path = write_toml("cfg_escapes.toml", toml);
  CLI::App app2;
  config::RunConfigOptions again(app2);
  parse(again, app2, {"--config", path});
  EXPECT_EQ(again.config().run.name, name);
  EXPECT_EQ(again.config().run.out_dir, out_dir);
  EXPECT_EQ(again.to_toml(), toml);
}

// Relative data.dir and run.out_dir are made absolute against the working
// directory, so the saved config.toml means the same from anywhere.
TEST(RunConfig, RelativePathsBecomeAbsoluteAgainstTheWorkingDirectory) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--data.dir", "data/./x/", "--run.out_dir", "../runs"});
  const auto cwd = std::filesystem::current_path();
  EXPECT_EQ(opts.config().data.dir, (cwd / "data" / "x").string());
  EXPECT_EQ(opts.config().run.out_dir, (cwd.parent_path() / "runs").string());
  EXPECT_NE(opts.to_toml().find("dir = \"" + (cwd / "data" / "x").string() + "\""),
            std::string::npos)
      << opts.to_toml();
  CLI::App app2;
  config::RunConfigOptions absolute(app2);
  parse(absolute, app2, {"--data.dir", "/srv/data/x"});
  EXPECT_EQ(absolute.config().data.dir, "/srv/data/x") << "an absolute path stays as given";
}

// Reached through a symbolic link (/home -> /gpfs/home on a cluster), the
// working directory is saved by the name the shell gives it ($PWD), which
// other hosts share, not by getcwd()'s resolved one.
TEST(RunConfig, AWorkingDirectoryReachedThroughALinkKeepsItsName) {
  namespace fs = std::filesystem;
  const fs::path real = fs::temp_directory_path() / "cfg_link_target";
  const fs::path link = fs::temp_directory_path() / "cfg_link";
  fs::create_directories(real);
  fs::remove(link);
  fs::create_directory_symlink(real, link);
  const fs::path before = fs::current_path();
  const char* pwd_before = std::getenv("PWD");
  const std::string saved_pwd = pwd_before ? pwd_before : "";
  fs::current_path(link);
  setenv("PWD", link.c_str(), 1);
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--data.dir", "data"});
  setenv("PWD", "/nowhere-else", 1);  // a stale $PWD is not believed
  CLI::App app2;
  config::RunConfigOptions stale(app2);
  parse(stale, app2, {"--data.dir", "data"});
  fs::current_path(before);
  setenv("PWD", saved_pwd.c_str(), 1);
  EXPECT_EQ(opts.config().data.dir, (link / "data").string());
  EXPECT_EQ(stale.config().data.dir, (fs::canonical(real) / "data").string());
}

// A ".." after a symbolic link means one directory by the working
// directory's name and another to the operating system (which prepare_data's
// "--out ../x" wrote to): refused, naming the key and both; a path that
// means the same either way is kept by name.
TEST(RunConfig, DotDotPastALinkIsRefusedWhereTheReadingsDiffer) {
  namespace fs = std::filesystem;
  char tmp[] = "/tmp/cfg_dotdot.XXXXXX";
  ASSERT_NE(::mkdtemp(tmp), nullptr);
  const fs::path top = tmp;
  fs::create_directories(top / "real" / "deep");
  fs::create_directory_symlink(top / "real" / "deep", top / "link");
  const fs::path before = fs::current_path();
  const char* pwd_before = std::getenv("PWD");
  const std::string saved_pwd = pwd_before ? pwd_before : "";
  fs::current_path(top / "link");
  setenv("PWD", (top / "link").c_str(), 1);
  std::string refusal;
  try {
    CLI::App app;
    config::RunConfigOptions opts(app);
    parse(opts, app, {"--data.dir", "../x"});
  } catch (const std::exception& e) {
    refusal = e.what();
  }
  CLI::App app2;
  config::RunConfigOptions plain(app2);
  parse(plain, app2, {"--data.dir", "data", "--run.out_dir", "runs/../out"});
  fs::current_path(before);
  setenv("PWD", saved_pwd.c_str(), 1);
  EXPECT_NE(refusal.find("data.dir = '../x' is " + (top / "x").string()), std::string::npos)
      << refusal;
  EXPECT_NE(refusal.find(fs::canonical(top / "real").string() + "/x to the operating system"),
            std::string::npos)
      << refusal;
  EXPECT_EQ(plain.config().data.dir, (top / "link" / "data").string());
  EXPECT_EQ(plain.config().run.out_dir, (top / "link" / "out").string());
  fs::remove_all(top);
}

// evaluate's option names work for the trainer's settings too.
TEST(RunConfig, ThreadsAndDeviceAreAlsoPlainOptions) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  parse(opts, app, {"--threads", "3", "--device", "cpu"});
  EXPECT_EQ(opts.config().train.threads, 3);
  EXPECT_EQ(opts.config().train.device, choices::Device::kCpu);
}

// --help shows each key's type or allowed values and its default.
TEST(RunConfig, HelpShowsTypesAllowedValuesAndDefaults) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  const std::string help = app.help();
  for (const char* shown :
       {"--model.d_model INT=512", "--model.norm {pre,post}=pre", "--optim.lr FLOAT=2.0",
        "--dist.overlap BOOL=true", "--data.dir TEXT=data/default",
        "--train.threads,--threads INT=0", "{noam,inverse_sqrt,constant}=noam"})
    EXPECT_NE(help.find(shown), std::string::npos) << "'" << shown << "' not in:\n" << help;
}

// The reference has a table per section and a row per key, with its values
// and default (docs/configuration.md is checked against the trainer's own
// output in train_cli_test).
TEST(RunConfig, ReferenceListsEveryKeyWithItsDefault) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  const std::string reference = opts.reference();
  for (const char* row : {"## [model]", "| `model.d_model` | INT | `512` | model width d_model |",
                          "| `model.norm` | `pre`, `post` | `pre` |",
                          "| `optim.schedule` | `noam`, `inverse_sqrt`, "
                          "`constant` | `noam` |",
                          "| `train.threads`, `--threads` | INT | `0` |"})
    EXPECT_NE(reference.find(row), std::string::npos) << "'" << row << "' not in:\n" << reference;
}

// A schema of its own: a BOOL key with a short name is a flag, a required key
// must be given, and the schema says how a section's first key was given.
TEST(Schema, FlagsRequiredKeysAndHowAKeyWasGiven) {
  struct Fields {
    bool force = false;
    bool overlap = true;
    std::filesystem::path out;
  };
  const auto parsed = [](Fields& fields, std::vector<std::string> args) {
    settings::Schema schema;
    schema.add("dataset.force", &fields.force, "replace");
    schema.add_alias("dataset.force", "--force");
    schema.add("dist.overlap", &fields.overlap, "overlap");
    schema.add("dataset.out", &fields.out, "where");
    schema.require("dataset.out");
    CLI::App app;
    schema.add_to_cli(app);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    schema.apply_cli();
    return std::make_pair(schema.first_given("dataset"), schema.first_given("dist"));
  };
  Fields fields;
  const auto given = parsed(fields, {"--dataset.out", "x", "--force", "--dist.overlap", "false"});
  EXPECT_TRUE(fields.force);
  EXPECT_FALSE(fields.overlap);
  EXPECT_EQ(fields.out, "x");
  EXPECT_EQ(given.first, "--force (dataset.force)");
  EXPECT_EQ(given.second, "--dist.overlap");

  Fields explicit_false;
  explicit_false.force = true;
  parsed(explicit_false, {"--force=false", "--dataset.out", "y"});
  EXPECT_FALSE(explicit_false.force);
  Fields spaced_false;
  spaced_false.force = true;
  parsed(spaced_false, {"--force", "false", "--dataset.out", "y"});
  EXPECT_FALSE(spaced_false.force);
  Fields long_name;
  parsed(long_name, {"--dataset.force", "true", "--dataset.out", "y"});
  EXPECT_TRUE(long_name.force);

  Fields missing;
  try {
    parsed(missing, {"--force"});
    FAIL() << "a required key was not asked for";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dataset.out is required: give --dataset.out"),
              std::string::npos)
        << e.what();
  }
}

// A value with forms of its own, read and written by the program's functions:
// "N%" as a share. Parsed from a file and from the command line (which
// wins), written back in its own form; a bad form is refused naming where,
// the key and what the parser wants.
TEST(Schema, AValueWithFormsOfItsOwn) {
  struct Share {
    double value = 0.5;
  };
  const auto parse_share = [](const std::string& text) {
    if (text.empty() || text.back() != '%') throw std::invalid_argument("give a percentage");
    return Share{std::stod(text.substr(0, text.size() - 1)) / 100};
  };
  const auto print_share = [](const Share& share) {
    std::ostringstream out;
    out << share.value * 100 << "%";
    return out.str();
  };
  const auto parsed = [&](Share& share, const std::string& file, std::vector<std::string> args) {
    settings::Schema schema;
    schema.add("data.share", &share, "share of the data", "N%", parse_share, print_share);
    CLI::App app;
    schema.add_to_cli(app);
    EXPECT_NE(app.help().find("--data.share N%=50%"), std::string::npos) << app.help();
    if (!file.empty()) schema.load_toml(file);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    schema.apply_cli();
    return schema.to_toml();
  };
  const auto file = write_toml("share.toml", "[data]\nshare = \"20%\"\n");
  Share share;
  EXPECT_EQ(parsed(share, file, {}), "[data]\nshare = \"20%\"\n");
  EXPECT_DOUBLE_EQ(share.value, 0.2);
  Share overridden;
  parsed(overridden, file, {"--data.share", "75%"});
  EXPECT_DOUBLE_EQ(overridden.value, 0.75);
  try {
    Share refused;
    parsed(refused, "", {"--data.share", "0.3"});
    FAIL() << "a share without % was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "command line: --data.share: give a percentage");
  }
}

void expect_error(const std::vector<std::string>& args, const std::string& needle) {
  CLI::App app;
  config::RunConfigOptions opts(app);
  try {
    parse(opts, app, args);
    FAIL() << "no error for " << needle;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RunConfig, ErrorsNameTheFileAndKey) {
  const auto typo = write_toml("cfg_typo.toml", "[model]\nd_modl = 64\n");
  expect_error({"--config", typo}, "unknown key 'model.d_modl'");
  expect_error({"--config", typo}, typo);
  const auto flat = write_toml("cfg_flat.toml", "d_model = 64\n");
  expect_error({"--config", flat}, "must be a [section]");
  const auto type = write_toml("cfg_type.toml", "[model]\nd_model = \"big\"\n");
  expect_error({"--config", type}, "model.d_model must be an integer");
  const auto real = write_toml("cfg_real.toml", "[model]\nheads = 2.5\n");
  expect_error({"--config", real}, "model.heads must be an integer");
  const auto syntax = write_toml("cfg_syntax.toml", "[model\n");
  expect_error({"--config", syntax}, "line 1");
  expect_error({"--model.norm", "middle"}, "model.norm must be one of {pre, post}");
  expect_error({"--model.d_model", "12x"}, "--model.d_model");
  expect_error({"--optim.schedule", "cosine"},
               "optim.schedule must be one of {noam, inverse_sqrt, constant}");
  // A choice given as another TOML type: its allowed names, not "a name".
  const auto number = write_toml("cfg_choice_type.toml", "[optim]\nschedule = 1\n");
  expect_error({"--config", number},
               "optim.schedule must be one of {noam, inverse_sqrt, constant}, got 1");
  expect_error({"--model.heads", "5"}, "d_model (512) must be divisible by heads (5)");
}

}  // namespace
