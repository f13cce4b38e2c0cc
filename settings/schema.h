// A settings schema: named options ("section.key") bound to the fields of a
// program's options struct, each with a help text. One schema serves four
// readers (the trainer's RunConfig, prepare_data's PrepareOptions):
//
//   TOML file   [model]\n d_model = 512      -> load_toml(path)
//   command     --model.d_model 512          -> add_to_cli(app) + apply_cli()
//   output      resolved settings as TOML    -> to_toml()
//   reference   every key, default, values   -> to_markdown() (docs/configuration.md,
//                                               docs/prepare_data.md)
//
// Precedence: defaults < settings file < command line. Unknown keys, values
// of the wrong type and missing required keys are errors naming the file or
// option and the key. On the command line a BOOL key's short name
// (add_alias) is a flag: `--joint-vocab` alone means true, `--joint-vocab=false`
// or `--joint-vocab false`;
// its long name takes a value (`--text.joint_vocab false`) like every key's.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "settings/names.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace settings {

class Schema {
 public:
  void add(const std::string& key, int64_t* field, const std::string& help);
  void add(const std::string& key, double* field, const std::string& help);
  void add(const std::string& key, bool* field, const std::string& help);
  void add(const std::string& key, std::string* field, const std::string& help);
  void add(const std::string& key, std::filesystem::path* field, const std::string& help);
  // Text that must be one of `allowed` (kinds a registry names, as tokenizers).
  void add(const std::string& key, std::string* field, const std::string& help,
           std::vector<std::string> allowed);

  // An enum field spelled by name in files and on the command line.
  template <typename Enum>
  void add(const std::string& key, Enum* field, const std::string& help, const Names<Enum>& names) {
    Named named;
    named.set = [field, names](const std::string& text) { *field = value_of(names, text); };
    named.get = [field, names] { return name_of(names, *field); };
    std::vector<std::string> choices;
    for (const auto& entry : names) choices.push_back(entry.first);
    add_entry(key, std::move(named), help, std::move(choices));
  }

  // A value with forms of its own (`latest|best|DIR`): read by `parse`, which
  // throws std::invalid_argument saying what is wanted, written by `print`.
  template <typename T, typename Parse, typename Print>
  void add(const std::string& key, T* field, const std::string& help, const std::string& type_name,
           Parse parse, Print print) {
    Named named;
    named.set = [field, parse](const std::string& text) { *field = parse(text); };
    named.get = [field, print] { return std::invoke(print, *field); };
    named.type_name = type_name;
    add_entry(key, std::move(named), help);
  }

  // A second command-line name for a key ("--threads" for train.threads).
  void add_alias(const std::string& key, const std::string& option);
  // A key that has no default: apply_cli() fails when neither the file nor
  // the command line gave it.
  void require(const std::string& key);

  void load_toml(const std::string& path);
  // One --section.key option per entry, its help showing the type or the
  // allowed values and the default.
  void add_to_cli(CLI::App& app);
  // After app.parse(): values given on the command line win; then every
  // required key must have been given.
  void apply_cli();
  // A program's whole reading: `--config FILE` (help: `config_help`) and
  // every key's option on `app`; after app.parse(), read_settings() loads the
  // file, if given, then applies the command line.
  void add_config_file_and_cli(CLI::App& app, const std::string& config_help);
  void read_settings();
  // How the first key of `section` given by the user was given ("--train-src",
  // "text.train_src in prep.toml"), or "" when none was.
  std::string first_given(const std::string& section) const;
  // How `key` was given, or "" when it was not (its default holds).
  std::string given(const std::string& key) const;
  std::string to_toml() const;
  // A Markdown table per section: key, type or allowed values, default, meaning.
  std::string to_markdown() const;

 private:
  struct Named {
    std::function<void(const std::string&)> set;  // called with one of the choices, if any
    std::function<std::string()> get;
    std::string type_name;  // without choices: the forms of its text
  };
  using Field = std::variant<int64_t*, double*, bool*, std::string*, std::filesystem::path*, Named>;
  struct Entry {
    std::string key;  // "section.name"
    Field field;
    std::string help;
    std::vector<std::string> choices;
    std::string alias;                    // another option name ("--threads"), or empty
    bool required = false;                // no default: the user gives it
    std::string given_as;                 // how the user gave it (option or file), empty if not
    std::string cli_value;                // text given on the command line, if any
    const CLI::Option* option = nullptr;  // its command-line option, once added
    CLI::Option* flag = nullptr;          // a BOOL key's short name, a flag
  };
  Entry* find(const std::string& key);
  static std::string value_text(const Field& field);   // the current value, unquoted
  static std::string type_label(const Entry& entry);   // INT, FLOAT, BOOL, TEXT, PATH or {a,b}
  static std::string option_name(const Entry& entry);  // "--shard-mb (dataset.shard_mb)"
  void add_entry(const std::string& key, Field field, const std::string& help,
                 std::vector<std::string> choices = {});
  // Parses text into the entry's field; errors say "<where>: <name> must be ...".
  void set_from_text(Entry& entry, const std::string& text, const std::string& where,
                     const std::string& name);

  std::vector<Entry> entries_;
  std::string config_file_;  // --config, or empty
};

// The keys of one section, each with its short command-line name:
//
//   Section text(schema, "text");
//   text("joint_vocab", "joint-vocab", &o.joint_vocab, "one vocabulary for both sides");
//                                      -> text.joint_vocab, --joint-vocab
class Section {
 public:
  Section(Schema& schema, std::string name) : schema_(schema), name_(std::move(name)) {}

  template <typename Field, typename... Rest>
  void operator()(const std::string& key, const std::string& option, Field* field,
                  const std::string& help, Rest&&... rest) {
    schema_.add(name_ + "." + key, field, help, std::forward<Rest>(rest)...);
    schema_.add_alias(name_ + "." + key, "--" + option);
  }

 private:
  Schema& schema_;
  std::string name_;
};

}  // namespace settings
