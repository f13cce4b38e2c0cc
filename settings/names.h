// An enum's names, as config files, the command line and the log write them:
// one table per enum, read by settings::Schema and by whatever prints a value.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace settings {

template <typename Enum>
using Names = std::vector<std::pair<std::string, Enum>>;

template <typename Enum>
const std::string& name_of(const Names<Enum>& names, Enum value) {
  for (const auto& [name, named] : names)
    if (named == value) return name;
  throw std::logic_error("a value missing from its enum's names");
}

// The value of `name`, or none when it is none of the names (a file's field).
template <typename Enum>
std::optional<Enum> find_value(const Names<Enum>& names, const std::string& name) {
  for (const auto& [named, value] : names)
    if (named == name) return value;
  return std::nullopt;
}

// The value of `name`, one of the names (readers check what they are given).
template <typename Enum>
Enum value_of(const Names<Enum>& names, const std::string& name) {
  if (const auto value = find_value(names, name)) return *value;
  throw std::logic_error("'" + name + "' is none of its enum's names");
}

// "word, char or spm": the names, for a refusal.
template <typename Enum>
std::string names_list(const Names<Enum>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
  return list;
}

}  // namespace settings
