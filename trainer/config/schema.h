// A config schema: named options ("section.key") bound to the fields of a
// config struct, each with a help text. One schema serves three readers:
//
//   TOML file   [model]\n d_model = 512      -> load_toml(path)
//   command     --model.d_model 512          -> add_to_cli(app) + apply_cli()
//   output      resolved config as TOML      -> to_toml()
//   reference   every key, default, values   -> to_markdown() (docs/configuration.md)
//
// Precedence: defaults < config file < command line. Unknown keys and values
// of the wrong type are errors naming the file and the key.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "trainer/choices/names.h"

namespace CLI {
class App;
}

namespace config {

class Schema {
 public:
  void add(const std::string& key, int64_t* field, const std::string& help);
  void add(const std::string& key, double* field, const std::string& help);
  void add(const std::string& key, bool* field, const std::string& help);
  void add(const std::string& key, std::string* field, const std::string& help);

  // An enum field spelled by name in files and on the command line.
  template <typename Enum>
  void add(const std::string& key, Enum* field, const std::string& help,
           const choices::Names<Enum>& names) {
    Named named;
    named.set = [field, names](const std::string& text) {
      *field = choices::value_of(names, text);
    };
    named.get = [field, names] { return choices::name_of(names, *field); };
    std::vector<std::string> choices;
    for (const auto& entry : names) choices.push_back(entry.first);
    add_entry(key, std::move(named), help, std::move(choices));
  }

  // A second command-line name for a key ("--threads" for train.threads).
  void add_alias(const std::string& key, const std::string& option);

  void load_toml(const std::string& path);
  // One --section.key option per entry, its help showing the type or the
  // allowed values and the default.
  void add_to_cli(CLI::App& app);
  void apply_cli();  // after app.parse(): values given on the command line win
  std::string to_toml() const;
  // A Markdown table per section: key, type or allowed values, default, meaning.
  std::string to_markdown() const;

 private:
  struct Named {
    std::function<void(const std::string&)> set;  // called with one of the choices
    std::function<std::string()> get;
  };
  using Field = std::variant<int64_t*, double*, bool*, std::string*, Named>;
  struct Entry {
    std::string key;  // "section.name"
    Field field;
    std::string help;
    std::vector<std::string> choices;
    std::string alias;      // another option name ("--threads"), or empty
    std::string cli_value;  // text given on the command line, if any
    bool on_cli = false;
  };
  Entry* find(const std::string& key);
  static std::string value_text(const Field& field);  // the current value, unquoted
  static std::string type_label(const Entry& entry);  // INT, FLOAT, BOOL, TEXT or {a,b}
  void add_entry(const std::string& key, Field field, const std::string& help,
                 std::vector<std::string> choices = {});
  // Parses text into the entry's field; `where` names the source in errors.
  void set_from_text(Entry& entry, const std::string& text, const std::string& where);

  std::vector<Entry> entries_;
};

}  // namespace config
