// A config schema: named options ("section.key") bound to the fields of a
// config struct, each with a help text. One schema serves three readers:
//
//   TOML file   [model]\n d_model = 512      -> load_toml(path)
//   command     --model.d_model 512          -> add_to_cli(app) + apply_cli()
//   output      resolved config as TOML      -> to_toml()
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

namespace CLI {
class App;
}

namespace config {

class Schema {
 public:
  void add(const std::string& key, int64_t* field, const std::string& help);
  void add(const std::string& key, double* field, const std::string& help);
  void add(const std::string& key, bool* field, const std::string& help);
  // choices: when non-empty, the only accepted values.
  void add(const std::string& key, std::string* field, const std::string& help,
           std::vector<std::string> choices = {});

  // An enum field spelled by name in files and on the command line.
  template <typename Enum>
  void add(const std::string& key, Enum* field, const std::string& help,
           std::vector<std::pair<std::string, Enum>> names) {
    Named named;
    named.set = [field, names](const std::string& text) {
      for (const auto& [name, value] : names)
        if (name == text) *field = value;
    };
    named.get = [field, names] {
      for (const auto& [name, value] : names)
        if (value == *field) return name;
      return std::string("?");
    };
    std::vector<std::string> choices;
    for (const auto& entry : names) choices.push_back(entry.first);
    add_entry({key, std::move(named), help, std::move(choices), {}, false});
  }

  void load_toml(const std::string& path);
  void add_to_cli(CLI::App& app);  // one --section.key option per entry
  void apply_cli();                // after app.parse(): values given on the command line win
  std::string to_toml() const;

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
    std::string cli_value;  // text given on the command line, if any
    bool on_cli = false;
  };
  Entry* find(const std::string& key);
  void add_entry(Entry entry);
  // Parses text into the entry's field; `where` names the source in errors.
  void set_from_text(Entry& entry, const std::string& text, const std::string& where);

  std::vector<Entry> entries_;
};

}  // namespace config
