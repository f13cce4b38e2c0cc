#include "settings/schema.h"

#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace settings {

namespace {

namespace fs = std::filesystem;

// Shortest text that reads back as the same double, always with a '.' or an
// exponent so that TOML keeps it a float: 0.1 -> "0.1", 2 -> "2.0".
std::string format_double(double value) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
  std::string text(buffer, end);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string section_of(const std::string& key) { return key.substr(0, key.find('.')); }
std::string key_name(const std::string& key) { return key.substr(key.find('.') + 1); }

// What a key's value must be: its choices where it has them (a name of a
// set), else its type.
template <typename Entry>
std::string expected(const Entry& entry) {
  if (!entry.choices.empty()) {
    std::string allowed;
    for (const auto& c : entry.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    return "one of {" + allowed + "}";
  }
  static const char* names[] = {"an integer", "a number", "true or false",
                                "a string",   "a path",   "a name"};
  return names[entry.field.index()];
}

}  // namespace

void Schema::add_entry(const std::string& key, Field field, const std::string& help,
                       std::vector<std::string> choices) {
  if (key.find('.') == std::string::npos)
    throw std::logic_error("config key without a section: " + key);
  if (find(key)) throw std::logic_error("config key registered twice: " + key);
  Entry entry;
  entry.key = key;
  entry.field = std::move(field);
  entry.help = help;
  entry.choices = std::move(choices);
  entries_.push_back(std::move(entry));
}

void Schema::add(const std::string& key, int64_t* field, const std::string& help) {
  add_entry(key, field, help);
}
void Schema::add(const std::string& key, double* field, const std::string& help) {
  add_entry(key, field, help);
}
void Schema::add(const std::string& key, bool* field, const std::string& help) {
  add_entry(key, field, help);
}
void Schema::add(const std::string& key, std::string* field, const std::string& help) {
  add_entry(key, field, help);
}

void Schema::add(const std::string& key, fs::path* field, const std::string& help) {
  add_entry(key, field, help);
}
void Schema::add(const std::string& key, std::string* field, const std::string& help,
                 std::vector<std::string> allowed) {
  add_entry(key, field, help, std::move(allowed));
}

void Schema::add_alias(const std::string& key, const std::string& option) {
  Entry* entry = find(key);
  if (!entry) throw std::logic_error("alias " + option + " for an unknown config key " + key);
  entry->alias = option;
}

void Schema::require(const std::string& key) {
  Entry* entry = find(key);
  if (!entry) throw std::logic_error("unknown config key required: " + key);
  entry->required = true;
}

Schema::Entry* Schema::find(const std::string& key) {
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  return it == entries_.end() ? nullptr : &*it;
}

void Schema::set_from_text(Entry& entry, const std::string& text, const std::string& where,
                           const std::string& name) {
  const auto fail = [&] {
    throw std::invalid_argument(where + ": " + name + " must be " + expected(entry) + ", got '" +
                                text + "'");
  };
  if (!entry.choices.empty() &&
      std::find(entry.choices.begin(), entry.choices.end(), text) == entry.choices.end())
    fail();
  std::visit(
      [&](auto& field) {
        using T = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<T, Named>) {
          try {
            field.set(text);
          } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(where + ": " + name + ": " + e.what());
          }
        } else if constexpr (std::is_same_v<T, std::string*> || std::is_same_v<T, fs::path*>) {
          *field = text;
        } else if constexpr (std::is_same_v<T, bool*>) {
          if (text == "true" || text == "1")
            *field = true;
          else if (text == "false" || text == "0")
            *field = false;
          else
            fail();
        } else {
          std::istringstream in(text);
          std::remove_pointer_t<T> value{};
          in >> value;
          if (in.fail() || !in.eof()) fail();
          *field = value;
        }
      },
      entry.field);
}

void Schema::load_toml(const std::string& path) {
  toml::table file;
  try {
    file = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << "config file " << path << ": " << e.description() << " (line " << e.source().begin.line
        << ")";
    throw std::invalid_argument(msg.str());
  }
  for (const auto& [section, node] : file) {
    const auto* table = node.as_table();
    if (!table)
      throw std::invalid_argument("config file " + path + ": top-level key '" +
                                  std::string(section.str()) +
                                  "' must be a [section] (e.g. [model], [optim])");
    for (const auto& [name, value] : *table) {
      const std::string key = std::string(section.str()) + "." + std::string(name.str());
      Entry* entry = find(key);
      if (!entry) {
        std::string known;
        for (const auto& e : entries_)
          if (section_of(e.key) == section.str())
            known += (known.empty() ? "" : ", ") + key_name(e.key);
        throw std::invalid_argument(
            "config file " + path + ": unknown key '" + key + "'" +
            (known.empty() ? " (no such section)"
                           : " (known in [" + std::string(section.str()) + "]: " + known + ")"));
      }
      // The value is parsed by the field's own rules, so the file and the
      // command line accept the same things; a TOML type that cannot be the
      // field's (a string for a number, a float for an integer) is refused.
      const auto& f = entry->field;
      const bool text_field = std::holds_alternative<std::string*>(f) ||
                              std::holds_alternative<fs::path*>(f) ||
                              std::holds_alternative<Named>(f);
      const bool fits = value.is_string()    ? text_field
                        : value.is_boolean() ? std::holds_alternative<bool*>(f)
                        : value.is_integer() ? std::holds_alternative<int64_t*>(f) ||
                                                   std::holds_alternative<double*>(f)
                        : value.is_floating_point() ? std::holds_alternative<double*>(f)
                                                    : false;
      if (!fits) {
        std::ostringstream got;
        value.visit([&](const auto& v) { got << v; });
        throw std::invalid_argument("config file " + path + ": " + key + " must be " +
                                    expected(*entry) + ", got " + got.str());
      }
      std::string text;
      if (value.is_string())
        text = *value.value<std::string>();
      else if (value.is_boolean())
        text = *value.value<bool>() ? "true" : "false";
      else if (value.is_integer())
        text = std::to_string(*value.value<int64_t>());
      else
        text = format_double(*value.value<double>());
      set_from_text(*entry, text, "config file " + path, key);
      entry->given_as = key + " in " + path;
    }
  }
}

void Schema::add_to_cli(CLI::App& app) {
  for (auto& entry : entries_) {
    // A BOOL key's short name is a flag: "--force" (true), "--force=false" or
    // "--force false" (the programs take no positional arguments it could
    // swallow); its long name takes a value, as every key's does.
    const bool flag = std::holds_alternative<bool*>(entry.field) && !entry.alias.empty();
    const std::string names =
        "--" + entry.key + (entry.alias.empty() || flag ? "" : "," + entry.alias);
    CLI::Option* option =
        app.add_option(names, entry.cli_value, entry.help)->type_name(type_label(entry));
    if (!entry.required) option->default_str(value_text(entry.field));
    entry.option = option;
    if (flag) entry.flag = app.add_flag(entry.alias, entry.cli_value, entry.help)->expected(0, 1);
    // Given twice, the last one wins (a script's defaults, then the user's override).
    for (CLI::Option* given : {option, entry.flag})
      if (given)
        given->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
            ->group("[" + section_of(entry.key) + "]");
  }
}

void Schema::add_config_file_and_cli(CLI::App& app, const std::string& config_help) {
  app.add_option("--config", config_file_, config_help)->check(CLI::ExistingFile);
  add_to_cli(app);
}

void Schema::read_settings() {
  if (!config_file_.empty()) load_toml(config_file_);
  apply_cli();
}

void Schema::apply_cli() {
  for (auto& entry : entries_) {
    const bool given = (entry.option != nullptr && entry.option->count() > 0) ||
                       (entry.flag != nullptr && entry.flag->count() > 0);
    if (!given) continue;
    entry.given_as = option_name(entry);
    set_from_text(entry, entry.cli_value, "command line", entry.given_as);
  }
  for (const auto& entry : entries_) {
    if (entry.required && entry.given_as.empty())
      throw std::invalid_argument(entry.key + " is required: give " + option_name(entry) +
                                  " or set it in a settings file");
  }
}

std::string Schema::first_given(const std::string& section) const {
  for (const auto& entry : entries_)
    if (section_of(entry.key) == section && !entry.given_as.empty()) return entry.given_as;
  return "";
}

std::string Schema::given(const std::string& key) const {
  for (const auto& entry : entries_)
    if (entry.key == key) return entry.given_as;
  throw std::logic_error("unknown config key asked for: " + key);
}

std::string Schema::option_name(const Entry& entry) {
  return entry.alias.empty() ? "--" + entry.key : entry.alias + " (" + entry.key + ")";
}

std::string Schema::value_text(const Field& field) {
  return std::visit(
      [](const auto& f) -> std::string {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, Named>)
          return f.get();
        else if constexpr (std::is_same_v<T, std::string*>)
          return *f;
        else if constexpr (std::is_same_v<T, fs::path*>)
          return f->string();
        else if constexpr (std::is_same_v<T, bool*>)
          return *f ? "true" : "false";
        else if constexpr (std::is_same_v<T, double*>)
          return format_double(*f);
        else
          return std::to_string(*f);
      },
      field);
}

std::string Schema::type_label(const Entry& entry) {
  if (!entry.choices.empty()) {
    std::string label;
    for (const auto& c : entry.choices) label += (label.empty() ? "{" : ",") + c;
    return label + "}";
  }
  if (const auto* named = std::get_if<Named>(&entry.field)) return named->type_name;
  static const char* labels[] = {"INT", "FLOAT", "BOOL", "TEXT", "PATH"};
  return labels[entry.field.index()];
}

namespace {

// A TOML basic string (TOML 1.0, "String"): quotes and backslashes escaped,
// and every control character, which a basic string may not hold as is
// (a path with a newline in it), written as an escape.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof(escape), "\\u%04X", static_cast<unsigned>(c));
          out += escape;
        } else {
          out += c;  // UTF-8 bytes of other characters as they are
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string Schema::to_toml() const {
  std::ostringstream out;
  std::string current;
  for (const auto& entry : entries_) {
    const std::string section = section_of(entry.key);
    if (section != current) {
      out << (current.empty() ? "" : "\n") << "[" << section << "]\n";
      current = section;
    }
    const bool quoted = std::holds_alternative<std::string*>(entry.field) ||
                        std::holds_alternative<fs::path*>(entry.field) ||
                        std::holds_alternative<Named>(entry.field);
    out << key_name(entry.key) << " = ";
    if (quoted)
      out << toml_string(value_text(entry.field));
    else
      out << value_text(entry.field);
    out << "\n";
  }
  return out.str();
}

std::string Schema::to_markdown() const {
  std::ostringstream out;
  std::string current;
  for (const auto& entry : entries_) {
    const std::string section = section_of(entry.key);
    if (section != current) {
      out << "\n## [" << section << "]\n\n"
          << "| key | type or values | default | meaning |\n|---|---|---|---|\n";
      current = section;
    }
    const auto cell = [](const std::string& text) {  // '|' and '<' escaped: a cell, not HTML
      std::string escaped;
      for (const char c : text) {
        if (c == '|' || c == '<') escaped += '\\';
        escaped += c;
      }
      return escaped;
    };
    const std::string meaning = cell(entry.help);
    std::string values = cell(type_label(entry));
    if (!entry.choices.empty()) {
      values.clear();
      for (const auto& c : entry.choices) values += (values.empty() ? "`" : ", `") + c + "`";
    }
    const std::string fallback = entry.required ? "required" : "`" + value_text(entry.field) + "`";
    const std::string alias = entry.alias.empty() ? "" : ", `" + entry.alias + "`";
    out << "| `" << entry.key << "`" << alias << " | " << values << " | " << fallback << " | "
        << meaning << " |\n";
  }
  return out.str();
}

}  // namespace settings
